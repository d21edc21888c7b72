import { ERROR_CODES, type ErrorCode, errorEnvelopeSchema, type FieldIssue } from "@app/contracts";
import { z } from "zod";

/** Codes of errors the client raises itself, next to the service's {@link ErrorCode}s. */
export type ClientOnlyCode = "network_error" | "invalid_response" | "aborted";

/**
 * Every code an {@link ApiError} can carry: the shared table's, the client's own, and any other
 * code a route answers with (the MCP routes have their own, apps/api/src/mcp/errors.ts), kept
 * as sent so callers can tell them apart.
 */
export type ClientErrorCode = ErrorCode | ClientOnlyCode | (string & {});

const KNOWN = new Set<string>(ERROR_CODES);

/** The envelope with a code outside the shared table (a lower-case word with underscores). */
const otherCodeEnvelope = z.object({
  ok: z.literal(false),
  error: z.object({
    code: z.string().regex(/^[a-z][a-z0-9_]{0,63}$/),
    message: z.string(),
    issues: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
  }),
});

/** Code used for an error response that carries no envelope, by status. */
function codeForStatus(status: number): ErrorCode {
  if (status === 400) return "bad_request";
  if (status === 401) return "unauthorized";
  if (status === 403) return "forbidden";
  if (status === 404) return "not_found";
  if (status === 409) return "conflict";
  if (status === 413) return "payload_too_large";
  if (status === 415) return "unsupported_media_type";
  if (status === 429) return "rate_limited";
  if (status === 503) return "service_unavailable";
  return "internal_error";
}

/**
 * A failed call: the service's error envelope (`{ ok:false, error:{code,message} }`) turned into
 * a typed error, or a client-side failure (network, abort, response of an unexpected shape).
 */
export class ApiError extends Error {
  override readonly name = "ApiError";
  /** HTTP status (0 when no response arrived). */
  readonly status: number;
  readonly code: ClientErrorCode;
  /** Field problems of a `validation_failed` error. */
  readonly issues: FieldIssue[];
  /** Seconds to wait before trying again, from the response's `Retry-After` (null without one). */
  readonly retryAfter: number | null;

  constructor(
    status: number,
    code: ClientErrorCode,
    message: string,
    options?: { issues?: FieldIssue[]; cause?: unknown; retryAfter?: number | null },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.status = status;
    this.code = code;
    this.issues = options?.issues ?? [];
    this.retryAfter = options?.retryAfter ?? null;
  }

  /** True for 401: no usable JWT (missing, expired, foreign, or every key invalidated). */
  get unauthorized(): boolean {
    return this.status === 401;
  }
}

/** True when `error` is an {@link ApiError} answering 401. */
export function isUnauthorized(error: unknown): boolean {
  return error instanceof ApiError && error.unauthorized;
}

/**
 * Seconds from a `Retry-After` header (RFC 9110: delta-seconds or an HTTP date), rounded up and at
 * least 1; null when absent or unreadable. Cross-origin it is readable because the services list
 * it in `Access-Control-Expose-Headers` (packages/http-kit/src/cors.ts).
 */
export function retryAfterSeconds(value: string | null, now: number = Date.now()): number | null {
  const text = value?.trim();
  if (!text) return null;
  if (/^\d+$/.test(text)) return Math.max(1, Number(text));
  // An HTTP date names its month ("Sun, 06 Nov 1994 08:49:37 GMT"); Date.parse alone accepts "-5".
  const at = /[a-z]/i.test(text) ? Date.parse(text) : Number.NaN;
  return Number.isNaN(at) ? null : Math.max(1, Math.ceil((at - now) / 1000));
}

/** Reads an error response's envelope into an {@link ApiError} (the body is consumed). */
export async function errorFromResponse(response: Response): Promise<ApiError> {
  const text = await response.text().catch(() => "");
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  const retryAfter = retryAfterSeconds(response.headers.get("retry-after"));
  const parsed = errorEnvelopeSchema.safeParse(json);
  if (parsed.success) {
    const { code, message, issues } = parsed.data.error;
    return new ApiError(response.status, KNOWN.has(code) ? code : codeForStatus(response.status), message, {
      ...(issues ? { issues } : {}),
      retryAfter,
    });
  }
  const other = otherCodeEnvelope.safeParse(json);
  if (other.success) {
    const { code, message, issues } = other.data.error;
    return new ApiError(response.status, code, message, { ...(issues ? { issues } : {}), retryAfter });
  }
  return new ApiError(response.status, codeForStatus(response.status), `HTTP ${response.status}${text ? `: ${text.slice(0, 200)}` : ""}`, {
    retryAfter,
  });
}

/** Wraps a thrown fetch failure (network down, CORS refusal, abort) as an {@link ApiError}. */
export function networkError(cause: unknown): ApiError {
  if (cause instanceof ApiError) return cause;
  const aborted = cause instanceof Error && (cause.name === "AbortError" || cause.name === "TimeoutError");
  const message = cause instanceof Error ? cause.message : String(cause);
  return new ApiError(0, aborted ? "aborted" : "network_error", aborted ? "request aborted" : `network error: ${message}`, { cause });
}
