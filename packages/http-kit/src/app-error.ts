import { type ErrorCode, type FieldIssue, statusOf } from "@app/contracts";

/** Options of {@link AppError}. */
export interface AppErrorOptions {
  /** Whether `message` may be shown to the client (default: true below 500, false from 500). */
  expose?: boolean;
  /** Field problems for `validation_failed`. */
  issues?: FieldIssue[];
  /** Extra response headers (e.g. `Retry-After`). */
  headers?: Record<string, string>;
  cause?: unknown;
}

/**
 * The one error type of the service: a stable `code`, the HTTP `status` that belongs to it,
 * and `expose`, which says whether the message is safe for the client. The error middleware
 * turns it into the `{ ok: false, error }` envelope.
 */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly expose: boolean;
  readonly issues: FieldIssue[] | undefined;
  readonly headers: Record<string, string> | undefined;

  constructor(code: ErrorCode, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "AppError";
    this.code = code;
    this.status = statusOf(code);
    this.expose = options.expose ?? this.status < 500;
    this.issues = options.issues;
    this.headers = options.headers;
  }
}

/** True for an {@link AppError} (also across duplicated module instances). */
export function isAppError(value: unknown): value is AppError {
  return value instanceof AppError || (value as { name?: unknown } | null)?.name === "AppError";
}
