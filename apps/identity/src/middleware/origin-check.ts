import { AppError } from "@app/http-kit";
import type { Request } from "express";

const SAFE = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * CSRF defence for cookie-authenticated state-changing requests: a browser request whose
 * `Origin` is not on the allow-list, or that `Sec-Fetch-Site` marks cross-site without an
 * allowed origin, answers 403. Requests with neither header (curl, servers) pass.
 */
export function originCheck(allowed: readonly string[]): (req: Request) => void {
  const origins = new Set(allowed);
  return (req) => {
    if (SAFE.has(req.method)) return;
    const origin = req.headers.origin;
    if (origin !== undefined) {
      if (!origins.has(origin)) throw new AppError("origin_not_allowed", "origin is not allowed");
      return;
    }
    if (req.headers["sec-fetch-site"] === "cross-site") throw new AppError("origin_not_allowed", "cross-site request refused");
  };
}
