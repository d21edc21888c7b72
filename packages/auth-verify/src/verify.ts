import { AuthVerifyError, type AuthVerifyErrorCode, toAuthVerifyError } from "./errors.js";
import { type CheckedJwt, createJwtCheck, TOKEN_TYPE } from "./jwt-check.js";
import { RemoteKeySet, type RemoteKeySetOptions, type RemoteKeySetStats } from "./remote-key-set.js";
import {
  DEFAULT_VERIFIED_CACHE_MAX_ENTRIES,
  type VerifiedToken,
  VerifiedTokenCache,
  type VerifiedTokenCacheStats,
} from "./verified-cache.js";

/** Default clock tolerance for `exp`, `nbf`, `iat` and the lifetime, in seconds. */
export const DEFAULT_CLOCK_TOLERANCE_SEC = 5;
/** Default longest accepted token, in characters; longer input is refused before any parsing. */
export const DEFAULT_MAX_TOKEN_LENGTH = 8192;
/**
 * Default longest accepted token lifetime (`exp - iat`) and age (`now - iat`): 30 days, the
 * lifetime identity gives its tokens (apps/identity/src/services/tokens.ts).
 */
export const DEFAULT_MAX_TOKEN_LIFETIME_SEC = 2_592_000;

/** Length of `Bearer ` (the scheme and its one space). */
const BEARER_PREFIX_LENGTH = 7;
/**
 * The scheme in any ASCII letter case and one space. Without the `u` flag, `i` never folds a
 * non-ASCII character onto an ASCII one, so only the 2^6 ASCII spellings match.
 */
const BEARER_SCHEME = /^bearer /i;

/** Options of {@link createVerifier}. Key set options apply only when `keySet` is not given. */
export interface VerifierOptions extends Omit<RemoteKeySetOptions, "url" | "now"> {
  /** Address of the public key set (e.g. `${base_url}/api/auth/jwks`). Required unless `keySet` is given. */
  jwksUrl?: string | URL;
  /** A key set to share between verifiers instead of `jwksUrl`; not closed by {@link Verifier.close}. */
  keySet?: RemoteKeySet;
  /** Accepted `iss` value(s). Unchecked when absent. */
  issuer?: string | string[];
  /** Accepted `aud` value(s). Unchecked when absent. */
  audience?: string | string[];
  /**
   * The one accepted `typ` header. Default {@link TOKEN_TYPE} (`JWT`, the contract's tokens); a
   * resource server of OAuth access tokens (RFC 9068) sets `at+jwt`. jose compares it without letter
   * case and with or without the `application/` prefix; a token of any other type is refused as
   * `invalid_claims`, so one verifier never accepts the other's tokens.
   */
  tokenType?: string;
  /** Tolerance for `exp`, `nbf` and `iat`, in seconds. Default {@link DEFAULT_CLOCK_TOLERANCE_SEC}. */
  clockToleranceSec?: number;
  /**
   * Longest accepted lifetime `exp - iat`, and age `now - iat`, in seconds (plus the clock
   * tolerance). Default {@link DEFAULT_MAX_TOKEN_LIFETIME_SEC}: a leaked signing key cannot mint a
   * token that outlives it.
   */
  maxTokenLifetimeSec?: number;
  /** Longest accepted token. Default {@link DEFAULT_MAX_TOKEN_LENGTH}. */
  maxTokenLength?: number;
  /** Cache of verified tokens: `false` disables it; default `{ maxEntries: 10_000 }`. */
  verifiedCache?: boolean | { maxEntries?: number };
  /** Clock in epoch milliseconds, shared with the key set it creates. Default `Date.now`. */
  now?: () => number;
  /**
   * Told the outcome of every verification, once: `ok`, or the code of the refusal. For metrics
   * (the API counts outcomes by code): it must not throw, and a throw is ignored.
   */
  onOutcome?: (outcome: VerificationOutcome) => void;
}

/** How one verification ended: `ok`, or the {@link AuthVerifyErrorCode} it was refused with. */
export type VerificationOutcome = "ok" | AuthVerifyErrorCode;

/** Counters of a {@link Verifier}. */
export interface VerifierStats {
  /** Calls of verify / verifyToken. */
  readonly verifications: number;
  /** Calls answered from the verified-token cache. */
  readonly cacheHits: number;
  /** Calls handed to jose `jwtVerify` (cache misses of well-shaped tokens). */
  readonly cryptoVerifications: number;
  /** Calls that threw. */
  readonly failures: number;
  /** The verified-token cache. */
  readonly cache: VerifiedTokenCacheStats;
  /** The key set. */
  readonly keySet: RemoteKeySetStats;
}

/** The verification primitive shared by every entry pattern (JSON routes, middleware, WebSocket). */
export interface Verifier {
  /**
   * Verifies an `Authorization` header value, `Bearer <jwt>` (see {@link extractBearerToken}).
   * @throws AuthVerifyError - never returns null.
   */
  verify(authorization: string | undefined | null): Promise<VerifiedToken>;
  /**
   * {@link Verifier.verify} without a promise when none is needed: a cache hit while the key set
   * is fresh (the steady state of a repeated token) returns the verified token itself, and a
   * refusal found before jose is asked (missing or malformed header, length, shape) is thrown.
   * Every other token goes to jose `jwtVerify`, which is asynchronous: it returns a promise, which
   * rejects on failure. Same checks, same error codes, same counters as `verify`.
   * @throws AuthVerifyError - synchronously, when the answer did not need jose.
   */
  verifyNow(authorization: string | undefined | null): VerifiedToken | Promise<VerifiedToken>;
  /**
   * Verifies a bare compact JWT.
   * @throws AuthVerifyError - never returns null.
   */
  verifyToken(token: string | undefined | null): Promise<VerifiedToken>;
  /** The key set in use. */
  readonly keySet: RemoteKeySet;
  /** Counters for diagnostics and benchmarks. */
  stats(): VerifierStats;
  /** Stops listening to the key set (and closes it when this verifier created it); clears the cache. */
  close(): void;
}

/**
 * The token inside an `Authorization` header value: the `Bearer` scheme, exactly one space (SP),
 * then the token. The scheme is case-insensitive (RFC 9110 §11.1, RFC 6750 §2.1): `bearer`,
 * `BEARER` and `Bearer` are the same. Whitespace stays strict: a tab or two spaces after the scheme,
 * leading or trailing whitespace, or whitespace inside the token make the value `malformed_token`
 * (the token is returned as is and the verifier requires three base64url segments; nothing is trimmed).
 * @throws AuthVerifyError `missing_token` for no header or an empty credential, `malformed_token` otherwise.
 */
export function extractBearerToken(authorization: string | undefined | null): string {
  if (authorization === undefined || authorization === null || authorization === "") {
    throw new AuthVerifyError("missing_token");
  }
  if (typeof authorization !== "string" || !hasBearerScheme(authorization)) {
    throw new AuthVerifyError("malformed_token", "The Authorization header is not a Bearer credential");
  }
  if (authorization.length === BEARER_PREFIX_LENGTH) throw new AuthVerifyError("missing_token");
  return authorization.slice(BEARER_PREFIX_LENGTH);
}

/** `Bearer ` in any letter case; the usual spelling is compared first. */
function hasBearerScheme(value: string): boolean {
  return value.startsWith("Bearer ") || BEARER_SCHEME.test(value);
}

/**
 * Freezes the claims so a caller cannot change what the cache hands to the next request: the top
 * level always, and nested objects only where a claim holds one (the product's claims are flat).
 */
function freezeClaims<T extends object>(claims: T): T {
  Object.freeze(claims);
  for (const key in claims) {
    const value: unknown = claims[key];
    if (typeof value === "object" && value !== null) freezeClaims(value);
  }
  return claims;
}

function checkTolerance(value: number): number {
  if (!Number.isFinite(value) || value < 0) throw new TypeError("clockToleranceSec must be a finite number >= 0");
  return value;
}

function checkMaxLength(value: number): number {
  if (!Number.isInteger(value) || value < 1) throw new TypeError("maxTokenLength must be an integer >= 1");
  return value;
}

function checkTokenType(value: unknown): string {
  if (typeof value !== "string" || !/^[\x21-\x7e]{1,64}$/.test(value))
    throw new TypeError("tokenType must be a non-empty token of printable ASCII");
  return value;
}

function checkMaxLifetime(value: number): number {
  if (!Number.isFinite(value) || value <= 0) throw new TypeError("maxTokenLifetimeSec must be a finite number > 0");
  return value;
}

/**
 * Creates the verifier. Nothing is fetched until the first token needs a key.
 *
 * Verification order: presence and length; the verified-token cache (a Map lookup and an expiry
 * check), answered synchronously while the key set is fresh; the shape (three base64url segments,
 * an Ed25519-sized signature), before any decoding; then jose `jwtVerify` (jwt-check.ts): protected
 * header, `crit`, `alg` pinned to EdDSA, embedded-key headers refused and the `kid` resolved from
 * the key set (a key imported by jose), the Ed25519 signature, `typ` (the `tokenType` option), the claims (`iss`, `aud`,
 * `nbf`, `exp`, `iat` with the clock tolerance); then the lifetime bound and a non-empty string
 * `sub`. jose is asynchronous, so a token the cache does not answer gets a promise. A verified token
 * enters the cache on its second sighting, so a stream of one-shot tokens does not churn it.
 */
export function createVerifier(options: VerifierOptions): Verifier {
  const now = options.now ?? Date.now;
  const toleranceSec = checkTolerance(options.clockToleranceSec ?? DEFAULT_CLOCK_TOLERANCE_SEC);
  const maxTokenLength = checkMaxLength(options.maxTokenLength ?? DEFAULT_MAX_TOKEN_LENGTH);
  const maxLifetimeSec = checkMaxLifetime(options.maxTokenLifetimeSec ?? DEFAULT_MAX_TOKEN_LIFETIME_SEC);
  const ownsKeySet = options.keySet === undefined;
  let keySet: RemoteKeySet;
  if (options.keySet !== undefined) {
    keySet = options.keySet;
  } else {
    if (options.jwksUrl === undefined) throw new TypeError("createVerifier needs jwksUrl or keySet");
    keySet = new RemoteKeySet({ ...options, url: options.jwksUrl, now });
  }
  const cacheOption = options.verifiedCache ?? true;
  const maxEntries =
    cacheOption === false
      ? 0
      : cacheOption === true
        ? DEFAULT_VERIFIED_CACHE_MAX_ENTRIES
        : (cacheOption.maxEntries ?? DEFAULT_VERIFIED_CACHE_MAX_ENTRIES);
  const cache = new VerifiedTokenCache(maxEntries);
  const unsubscribe = keySet.onRefresh((event) => {
    cache.dropKids(event.droppedKids);
  });

  const checkJwt = createJwtCheck({
    keySet,
    issuer: options.issuer,
    audience: options.audience,
    tokenType: checkTokenType(options.tokenType ?? TOKEN_TYPE),
    toleranceSec,
    maxLifetimeSec,
    injectedClock: options.now !== undefined,
  });

  let verifications = 0;
  let cacheHits = 0;
  let cryptoVerifications = 0;
  let failures = 0;
  const onOutcome = options.onOutcome;

  function report(outcome: VerificationOutcome): void {
    if (onOutcome === undefined) return;
    try {
      onOutcome(outcome);
    } catch {
      // An observer that fails must not change the verification's answer.
    }
  }

  /** The cache's admission policy (second sighting) for what jose verified. */
  function admit(token: string, checked: CheckedJwt, nowMs: number): VerifiedToken {
    const verified: VerifiedToken = Object.freeze({ userId: checked.sub, claims: freezeClaims(checked.claims), kid: checked.kid });
    cache.admit(token, verified, (checked.exp + toleranceSec) * 1000, nowMs);
    report("ok");
    return verified;
  }

  /**
   * Verifies a token the cache did not answer: the shape synchronously (a refusal is thrown), then
   * jose, whose answer is a promise.
   */
  function verifyFresh(token: string, nowMs: number): Promise<VerifiedToken> {
    const pending = checkJwt.start(token, nowMs);
    cryptoVerifications += 1;
    return pending.then((result) => admit(token, checkJwt.finish(result), nowMs));
  }

  /** Counts, reports and converts a failure. */
  function fail(error: unknown): never {
    failures += 1;
    const refused = toAuthVerifyError(error);
    report(refused.code);
    throw refused;
  }

  function settle(pending: Promise<VerifiedToken>): Promise<VerifiedToken> {
    return pending.catch(fail);
  }

  /**
   * A hit whose key set is due for a refresh is served only after the key is asked for again, as
   * for an uncached token: a set past its stale-if-error window answers jwks_unavailable, a refresh
   * without the kid unknown_key, and a refresh that changed the kid's key material drops the entry
   * (verified again below). Without this a cached token outlived its key set.
   */
  async function revalidateHit(token: string, hit: VerifiedToken, nowMs: number): Promise<VerifiedToken> {
    await keySet.getKey(hit.kid);
    if (cache.has(token)) {
      cacheHits += 1;
      report("ok");
      return hit;
    }
    return verifyFresh(token, nowMs);
  }

  /** The one implementation behind every entry: synchronous for a cache hit on a fresh key set and for early refusals. */
  function verifyTokenNow(token: string | undefined | null): VerifiedToken | Promise<VerifiedToken> {
    verifications += 1;
    try {
      if (token === undefined || token === null || token === "") throw new AuthVerifyError("missing_token");
      if (typeof token !== "string" || token.length > maxTokenLength) throw new AuthVerifyError("malformed_token");
      const nowMs = now();
      const hit = cache.get(token, nowMs);
      if (hit !== undefined) {
        if (keySet.isFresh()) {
          cacheHits += 1;
          report("ok");
          return hit;
        }
        return settle(revalidateHit(token, hit, nowMs));
      }
      // Inlined verifyFresh: one promise reaction on jose's answer, for success and failure alike.
      const pending = checkJwt.start(token, nowMs);
      cryptoVerifications += 1;
      return pending.then((result) => {
        let checked: CheckedJwt;
        try {
          checked = checkJwt.finish(result);
        } catch (error) {
          return fail(error);
        }
        return admit(token, checked, nowMs);
      }, fail);
    } catch (error) {
      return fail(error);
    }
  }

  function verifyNow(authorization: string | undefined | null): VerifiedToken | Promise<VerifiedToken> {
    let token: string;
    try {
      if (typeof authorization === "string" && authorization.length > maxTokenLength + BEARER_PREFIX_LENGTH) {
        throw new AuthVerifyError("malformed_token");
      }
      token = extractBearerToken(authorization);
    } catch (error) {
      verifications += 1;
      return fail(error);
    }
    return verifyTokenNow(token);
  }

  // A synchronous throw becomes a rejection; a promise is handed on as it is (no extra turns).
  function verifyToken(token: string | undefined | null): Promise<VerifiedToken> {
    try {
      return Promise.resolve(verifyTokenNow(token));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  function verify(authorization: string | undefined | null): Promise<VerifiedToken> {
    try {
      return Promise.resolve(verifyNow(authorization));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  return {
    verify,
    verifyNow,
    verifyToken,
    keySet,
    stats: () => ({
      verifications,
      cacheHits,
      cryptoVerifications,
      failures,
      cache: cache.stats(),
      keySet: keySet.stats(),
    }),
    close: () => {
      unsubscribe();
      cache.clear();
      if (ownsKeySet) keySet.close();
    },
  };
}
