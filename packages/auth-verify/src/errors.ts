/**
 * Every reason a bearer token can be refused. Stable strings: callers map them to responses and
 * logs; the `message` of an {@link AuthVerifyError} is for people and may change.
 */
export type AuthVerifyErrorCode =
  | "missing_token"
  | "malformed_token"
  | "invalid_signature"
  | "token_expired"
  | "token_not_yet_valid"
  | "invalid_claims"
  | "unknown_key"
  | "jwks_unavailable";

/** The HTTP status that belongs to each {@link AuthVerifyErrorCode}: 401, except 503 when no key set can be had. */
export const AUTH_VERIFY_ERROR_STATUS = {
  missing_token: 401,
  malformed_token: 401,
  invalid_signature: 401,
  token_expired: 401,
  token_not_yet_valid: 401,
  invalid_claims: 401,
  unknown_key: 401,
  jwks_unavailable: 503,
} as const satisfies Record<AuthVerifyErrorCode, number>;

/** Every {@link AuthVerifyErrorCode}, for exhaustive tests and schemas. */
export const AUTH_VERIFY_ERROR_CODES = Object.keys(AUTH_VERIFY_ERROR_STATUS) as AuthVerifyErrorCode[];

const DEFAULT_MESSAGES: Record<AuthVerifyErrorCode, string> = {
  missing_token: "No bearer token was presented",
  malformed_token: "The bearer token is malformed",
  invalid_signature: "The token signature is not valid",
  token_expired: "The token has expired",
  token_not_yet_valid: "The token is not valid yet",
  invalid_claims: "The token claims are not acceptable",
  unknown_key: "The token was signed by an unknown key",
  jwks_unavailable: "The signing key set is unavailable",
};

/**
 * The one error the verifier throws for a refused token. Carries a stable `code` and the HTTP
 * `status` to answer with. Messages never contain the token or any part of it.
 */
export class AuthVerifyError extends Error {
  /** Stable reason code. */
  readonly code: AuthVerifyErrorCode;
  /** HTTP status to answer with: 401, or 503 for `jwks_unavailable`. */
  readonly status: 401 | 503;

  /**
   * @param code - the reason
   * @param message - a human message; must never include the token (defaults to a fixed text)
   * @param options - standard error options (`cause`); never pass anything holding the token
   */
  constructor(code: AuthVerifyErrorCode, message?: string, options?: ErrorOptions) {
    super(message ?? DEFAULT_MESSAGES[code], options);
    this.name = "AuthVerifyError";
    this.code = code;
    this.status = AUTH_VERIFY_ERROR_STATUS[code];
  }
}

/** True when `value` is an {@link AuthVerifyError} (optionally of one `code`). */
export function isAuthVerifyError(value: unknown, code?: AuthVerifyErrorCode): value is AuthVerifyError {
  return value instanceof AuthVerifyError && (code === undefined || value.code === code);
}

/**
 * Maps any error raised while verifying to an {@link AuthVerifyError}: ours as they are, and the
 * codes jose `jwtVerify` throws (jwt-check.ts). The key set is this package's own (not jose's
 * remote JWKS), so key lookups throw ours. jose messages are not reused: some echo header text
 * taken from the token.
 */
export function toAuthVerifyError(error: unknown): AuthVerifyError {
  if (error instanceof AuthVerifyError) return error;
  const code = typeof error === "object" && error !== null ? (error as { code?: unknown }).code : undefined;
  switch (code) {
    case "ERR_JWT_EXPIRED":
      return new AuthVerifyError("token_expired");
    case "ERR_JWT_CLAIM_VALIDATION_FAILED": {
      const claim = (error as { claim?: unknown }).claim;
      const reason = (error as { reason?: unknown }).reason;
      if (claim === "nbf" && reason === "check_failed") return new AuthVerifyError("token_not_yet_valid");
      const name = typeof claim === "string" && /^[a-z]{1,8}$/.test(claim) ? claim : "unspecified";
      return new AuthVerifyError("invalid_claims", `The "${name}" claim is missing or not acceptable`);
    }
    case "ERR_JWS_SIGNATURE_VERIFICATION_FAILED":
      return new AuthVerifyError("invalid_signature");
    case "ERR_JOSE_ALG_NOT_ALLOWED":
      return new AuthVerifyError("invalid_signature", "The token algorithm is not accepted");
    case "ERR_JWS_INVALID":
    case "ERR_JWT_INVALID":
    case "ERR_JOSE_NOT_SUPPORTED":
      return new AuthVerifyError("malformed_token");
    default:
      // Not a jose error: keep it as the cause so a bug is visible in logs instead of silently a 401.
      return new AuthVerifyError("malformed_token", undefined, { cause: error });
  }
}
