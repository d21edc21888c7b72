import type { RequestHandler } from "express";

/**
 * Adds headers to `Access-Control-Expose-Headers` on CORS responses (http-kit's policy lists
 * set-auth-jwt, x-request-id and retry-after), so a cross-origin client can read pagination headers.
 */
export function exposeHeaders(names: readonly string[]): RequestHandler {
  return (_req, res, next) => {
    const current = res.getHeader("access-control-expose-headers");
    if (typeof current === "string" && current.length > 0) res.setHeader("access-control-expose-headers", `${current},${names.join(",")}`);
    next();
  };
}
