import { type CorsPolicyOptions, corsPolicy } from "@app/http-kit";
import type { RequestHandler } from "express";

/** `/api`, `/api/...` or `/api?...`, as Express matches the mount path `/api` (any case). */
const UNDER_API = /^\/api(?:[/?]|$)/i;

/**
 * CORS for /api: http-kit's policy (the web client's origins, credentials) with `expose` added to
 * `Access-Control-Expose-Headers`, so a cross-origin client can read pagination headers. A
 * request without `Origin` is not a cross-origin browser request: the policy would add nothing to
 * it, so it skips the policy entirely. Mounted without a path (a mount path costs Express a URL
 * rewrite on every request), it matches /api itself.
 */
export function apiCors(options: CorsPolicyOptions & { expose: readonly string[] }): RequestHandler {
  const policy = corsPolicy(options);
  const extra = options.expose.join(",");
  return (req, res, next) => {
    if (req.headers.origin === undefined || !UNDER_API.test(req.url)) return next();
    policy(req, res, (error?: unknown) => {
      if (error) return next(error);
      const current = res.getHeader("access-control-expose-headers");
      if (typeof current === "string" && current.length > 0) res.setHeader("access-control-expose-headers", `${current},${extra}`);
      next();
    });
  };
}
