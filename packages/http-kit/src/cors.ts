import { SET_AUTH_JWT_HEADER } from "@app/contracts";
import cors from "cors";
import type { RequestHandler } from "express";

/** Options of {@link corsPolicy}. */
export interface CorsPolicyOptions {
  /** Origins allowed to call with credentials (exact `scheme://host:port`). */
  origins: readonly string[];
  /**
   * List `set-auth-jwt` in `Access-Control-Expose-Headers` (default true). The contract requires
   * it; turning it off exists only for the test that proves why.
   */
  exposeAuthHeader?: boolean;
}

/**
 * CORS for the web client's own origin: an allow-list, credentials allowed, and `set-auth-jwt`
 * exposed so a cross-origin client can read the JWT from get-session.
 */
export function corsPolicy(options: CorsPolicyOptions): RequestHandler {
  const allowed = new Set(options.origins);
  const policy = cors({
    origin: (origin, callback) => callback(null, origin !== undefined && allowed.has(origin)),
    credentials: true,
    methods: ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"],
    allowedHeaders: ["authorization", "content-type", "last-event-id", "x-request-id"],
    // A web client reads how long to wait and what is left of a limit (RateLimit, IETF draft-8).
    exposedHeaders: [
      ...(options.exposeAuthHeader === false ? [] : [SET_AUTH_JWT_HEADER]),
      "x-request-id",
      "retry-after",
      "ratelimit",
      "ratelimit-policy",
    ],
    maxAge: 600,
  }) as RequestHandler;
  // A request without Origin is not a CORS request: `cors` would copy its options, ask the origin
  // callback (which refuses undefined) and call next without a header. Same answer, no work.
  return (req, res, next) => {
    if (req.headers.origin === undefined) {
      next();
      return;
    }
    return policy(req, res, next);
  };
}
