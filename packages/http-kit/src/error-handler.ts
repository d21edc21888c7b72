import { toFieldIssues } from "@app/contracts";
import type { ErrorRequestHandler, Request, RequestHandler } from "express";
import type { Logger } from "pino";
import { ZodError } from "zod";
import { AppError, isAppError } from "./app-error.js";
import { writeError } from "./envelope.js";

/** body-parser's error `type`s, mapped to our codes. */
const BODY_ERRORS: Record<string, () => AppError> = {
  "entity.parse.failed": () => new AppError("invalid_json", "request body is not valid JSON"),
  "entity.too.large": () => new AppError("payload_too_large", "request body is too large"),
  "request.size.invalid": () => new AppError("bad_request", "request body length does not match Content-Length"),
  "request.aborted": () => new AppError("bad_request", "request body was aborted"),
  "encoding.unsupported": () => new AppError("unsupported_media_type", "unsupported content encoding"),
  "charset.unsupported": () => new AppError("unsupported_media_type", "unsupported charset"),
};

/** Options of {@link errorHandler}. */
export interface ErrorHandlerOptions {
  logger: Logger;
  /** Maps errors of dependencies (database down, key set unreachable) to an AppError, or undefined. */
  classify?: (error: unknown) => AppError | undefined;
  /**
   * Requests whose error body also carries better-auth's top-level `code` and `message`
   * (envelope.ts, `topLevelFields`).
   */
  topLevelFields?: (req: Request) => boolean;
}

/** Normalises anything thrown into an {@link AppError}. */
export function toAppError(error: unknown, classify?: ErrorHandlerOptions["classify"]): AppError {
  if (isAppError(error)) return error;
  if (error instanceof ZodError) {
    return new AppError("validation_failed", "invalid input", { issues: toFieldIssues(error) });
  }
  const type = (error as { type?: unknown } | null)?.type;
  if (typeof type === "string" && BODY_ERRORS[type]) return (BODY_ERRORS[type] as () => AppError)();
  const classified = classify?.(error);
  if (classified) return classified;
  const status =
    (error as { status?: unknown; statusCode?: unknown } | null)?.status ?? (error as { statusCode?: unknown } | null)?.statusCode;
  if (typeof status === "number" && status >= 400 && status < 500) {
    // A client error raised by a parser we did not map by type (e.g. a corrupt gzip body).
    if (status === 413) return new AppError("payload_too_large", "request body is too large");
    if (status === 415) return new AppError("unsupported_media_type", "unsupported request body");
    return new AppError("bad_request", "request could not be read");
  }
  return new AppError("internal_error", "internal error", { expose: false, cause: error });
}

/**
 * The one error middleware: every failure becomes `{ ok: false, error: { code, message } }` with
 * the status of its code. Unexposed errors (5xx) get a generic message and are logged in full.
 */
export function errorHandler(options: ErrorHandlerOptions): ErrorRequestHandler {
  return (error, req, res, next) => {
    const appError = toAppError(error, options.classify);
    if (appError.status >= 500) {
      options.logger.error({ err: appError.cause ?? appError, code: appError.code }, "request failed");
    }
    if (res.headersSent) {
      // A streamed response already started: all we can do is end it.
      res.destroy();
      return;
    }
    writeError(res, appError, { topLevelFields: options.topLevelFields?.(req) ?? false });
    void next;
  };
}

/** Answers 404 `not_found` for any route nobody handled. */
export function notFoundHandler(): RequestHandler {
  return (req, _res, next) => next(new AppError("not_found", `no route for ${req.method} ${req.path}`));
}
