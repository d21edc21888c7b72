import { AppError } from "@app/http-kit";
import type { RequestHandler } from "express";

const SAFE = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * CSRF defence for cookie-authenticated state-changing requests: a browser request whose
 * `Origin` is not on the allow-list, or that `Sec-Fetch-Site` marks cross-site without an
 * allowed origin, answers 403. Requests with neither header (curl, servers) pass.
 */
export function originCheck(allowed: readonly string[]): RequestHandler {
  const origins = new Set(allowed);
  return (req, _res, next) => {
    if (SAFE.has(req.method)) return next();
    const origin = req.headers.origin;
    if (origin !== undefined) {
      return origins.has(origin) ? next() : next(new AppError("origin_not_allowed", "origin is not allowed"));
    }
    const site = req.headers["sec-fetch-site"];
    if (site === "cross-site") return next(new AppError("origin_not_allowed", "cross-site request refused"));
    next();
  };
}
