/**
 * Every stable error code the service answers with, and the HTTP status each one carries.
 * Clients switch on `code`; `message` is for people and may change.
 */
export const ERROR_STATUS = {
  bad_request: 400,
  invalid_token: 400,
  invalid_password: 400,
  invalid_json: 400,
  validation_failed: 400,
  /** A one-time code (emailed code) ran out of time: ask for a new one. */
  code_expired: 400,
  /** A WebAuthn challenge is unknown, used or expired: start the ceremony again. */
  challenge_expired: 400,
  /** A passkey's registration or assertion did not verify. */
  passkey_verification_failed: 400,
  two_factor_not_enabled: 400,
  unauthorized: 401,
  invalid_credentials: 401,
  missing_token: 401,
  malformed_token: 401,
  invalid_signature: 401,
  token_expired: 401,
  token_not_yet_valid: 401,
  invalid_claims: 401,
  unknown_key: 401,
  /** A TOTP, backup or emailed code that is wrong or already used. */
  invalid_code: 401,
  /** No pending second-factor sign-in (its cookie is missing, used or expired): sign in again. */
  invalid_two_factor_cookie: 401,
  forbidden: 403,
  origin_not_allowed: 403,
  email_not_verified: 403,
  /** A code took its last wrong try: ask for a new one. */
  too_many_attempts: 403,
  /** The action needs a recent sign-in (DELETE_FRESH_AGE) or a mailed confirmation. */
  session_not_fresh: 403,
  /** An OAuth access token lacks the scope the call needs (RFC 6750; the challenge names it). */
  insufficient_scope: 403,
  /** An operator banned the account (docs/admin.md): no sign-in by any method while the ban lasts. */
  banned: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  email_taken: 409,
  mcp_reconnect_required: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  internal_error: 500,
  mcp_upstream_unavailable: 502,
  mcp_upstream_invalid: 502,
  mcp_result_too_large: 502,
  service_unavailable: 503,
  jwks_unavailable: 503,
  mail_unavailable: 503,
  mcp_upstream_timeout: 504,
} as const satisfies Record<string, number>;

/** A stable error code (see {@link ERROR_STATUS}). */
export type ErrorCode = keyof typeof ERROR_STATUS;

/** All error codes, for schemas and exhaustive tests. */
export const ERROR_CODES = Object.keys(ERROR_STATUS) as ErrorCode[];

/** The HTTP status that belongs to a code. */
export function statusOf(code: ErrorCode): number {
  return ERROR_STATUS[code];
}
