import { AsyncResource } from "node:async_hooks";
import { AppError, setContextUser } from "@app/http-kit";
import type { Request, RequestHandler, Response } from "express";
import { type Authenticate, type AuthUser, authorizationOf } from "./authenticate.js";

/**
 * The entry of streaming and multipart routes: verifies `Authorization: Bearer` with the shared
 * primitive, sets `req.auth` and tags the request context with the user id (exactly as the JSON
 * entry does), then hands over to a handler that writes a raw response. Never reads a cookie.
 */
export function streamAuth(authenticate: Authenticate): RequestHandler {
  return async (req, res, next) => {
    const auth = req.auth ?? (await authenticate(authorizationOf(req)));
    req.auth = auth;
    setContextUser(auth.userId);
    keepContextOnResponseEvents(res);
    next();
  };
}

/**
 * A raw response (SSE, file) ends long after the handler returned, from a socket callback that has
 * lost the request's async context, so the access log line would miss `userId`. Emitting the
 * response's events inside the request context keeps the tag on every line of this request.
 */
function keepContextOnResponseEvents(res: Response): void {
  const emit = res.emit as (...args: unknown[]) => boolean;
  res.emit = AsyncResource.bind(emit, "response-events", res) as typeof res.emit;
}

/** The verified user of a request that passed {@link streamAuth} (401 if it did not). */
export function requireAuth(req: Request): AuthUser {
  if (!req.auth) throw new AppError("missing_token", "No bearer token was presented");
  return req.auth;
}
