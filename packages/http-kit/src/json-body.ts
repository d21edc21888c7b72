import { isCleanText } from "@app/contracts";
import express, { type RequestHandler } from "express";
import { AppError } from "./app-error.js";

/** Options of {@link jsonBody}. */
export interface JsonBodyOptions {
  /** Largest accepted body (default "100kb"); larger answers 413. */
  limit?: string | number;
}

const BODY_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/**
 * A JSON body parser that is strict about what it accepts: a request that carries a body with
 * a content type other than `application/json` answers 415, malformed JSON 400, oversized 413.
 * A request without a body gets `req.body = {}`; the route's schema decides whether that is enough.
 */
export function jsonBody(options: JsonBodyOptions = {}): RequestHandler {
  const parse = express.json({ limit: options.limit ?? "100kb", strict: true, type: () => true });
  return (req, res, next) => {
    if (!BODY_METHODS.has(req.method)) return next();
    const length = req.headers["content-length"];
    const hasBody = req.headers["transfer-encoding"] !== undefined || (length !== undefined && length !== "0");
    if (!hasBody) {
      req.body = {};
      return next();
    }
    if (!req.is("application/json") && !req.is("application/*+json")) {
      return next(new AppError("unsupported_media_type", "request body must be application/json"));
    }
    parse(req, res, (error?: unknown) => {
      if (error) return next(error);
      const bad = findUnsafeText(req.body, "");
      if (bad !== undefined) {
        return next(
          new AppError("validation_failed", `invalid body: ${bad || "(body)"}`, {
            issues: [{ path: bad || "(body)", message: "contains characters that are not allowed (NUL or a lone surrogate)" }],
          }),
        );
      }
      next();
    });
  };
}

/**
 * The dotted path of the first string (value or key) holding a NUL character or a lone UTF-16
 * surrogate, which PostgreSQL cannot store or would store altered; undefined when there is none.
 */
export function findUnsafeText(value: unknown, path: string, depth = 0): string | undefined {
  if (typeof value === "string") return isCleanText(value) ? undefined : path;
  if (depth > 64 || value === null || typeof value !== "object") return undefined;
  for (const [key, child] of Object.entries(value)) {
    const at = path ? `${path}.${key}` : key;
    if (!isCleanText(key)) return at;
    const found = findUnsafeText(child, at, depth + 1);
    if (found !== undefined) return found;
  }
  return undefined;
}
