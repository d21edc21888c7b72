/**
 * @app/auth-verify: the one bearer JWT verification primitive shared by every entry pattern of the
 * stateless API (JSON routes, streaming/multipart middleware, WebSocket upgrade). jose `jwtVerify`
 * does every cryptographic and claim check; this package adds the remote key set, the
 * verified-token cache and coded errors.
 * @packageDocumentation
 */
export {
  AUTH_VERIFY_ERROR_CODES,
  AUTH_VERIFY_ERROR_STATUS,
  AuthVerifyError,
  type AuthVerifyErrorCode,
  isAuthVerifyError,
  toAuthVerifyError,
} from "./errors.js";
export { type Ed25519JwkEntry, MAX_JWKS_BODY_CHARS, parseJwksBody, readJwksBody } from "./jwks-body.js";
export { ALLOWED_ALGORITHMS, FORBIDDEN_HEADERS, REQUIRED_CLAIMS, TOKEN_TYPE } from "./jwt-check.js";
export {
  DEFAULT_CACHE_MAX_AGE_MS,
  DEFAULT_COOLDOWN_MS,
  DEFAULT_FETCH_TIMEOUT_MS,
  DEFAULT_STALE_IF_ERROR_MS,
  type FetchLike,
  type KeySetRefreshEvent,
  RemoteKeySet,
  type RemoteKeySetOptions,
  type RemoteKeySetStats,
} from "./remote-key-set.js";
export {
  DEFAULT_VERIFIED_CACHE_MAX_ENTRIES,
  type VerifiedToken,
  VerifiedTokenCache,
  type VerifiedTokenCacheStats,
} from "./verified-cache.js";
export {
  createVerifier,
  DEFAULT_CLOCK_TOLERANCE_SEC,
  DEFAULT_MAX_TOKEN_LENGTH,
  DEFAULT_MAX_TOKEN_LIFETIME_SEC,
  extractBearerToken,
  type VerificationOutcome,
  type Verifier,
  type VerifierOptions,
  type VerifierStats,
} from "./verify.js";
