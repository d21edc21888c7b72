import type { KeyObject } from "node:crypto";
import { type CheckedHeader, type ClaimRules, checkClaims, checkProtectedHeader, checkSignature } from "./compact-jws.js";
import { AuthVerifyError, toAuthVerifyError } from "./errors.js";
import { RemoteKeySet, type RemoteKeySetOptions, type RemoteKeySetStats } from "./remote-key-set.js";
import {
  DEFAULT_VERIFIED_CACHE_MAX_ENTRIES,
  type VerifiedToken,
  VerifiedTokenCache,
  type VerifiedTokenCacheStats,
} from "./verified-cache.js";

/** Default clock tolerance for `exp` and `nbf`, in seconds. */
export const DEFAULT_CLOCK_TOLERANCE_SEC = 5;
/** Default longest accepted token, in characters; longer input is refused before any parsing. */
export const DEFAULT_MAX_TOKEN_LENGTH = 8192;
/** The only accepted JWS algorithm. Not configurable. */
export const ALLOWED_ALGORITHMS: readonly ["EdDSA"] = Object.freeze(["EdDSA"] as const);
/** Claims every token must carry. */
export const REQUIRED_CLAIMS: readonly string[] = Object.freeze(["exp", "iat", "sub"]);

const BEARER_PREFIX = "Bearer ";
/** Three non-empty base64url segments, no padding. */
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
/** An Ed25519 signature is 64 bytes: 86 base64url characters whose last one carries 2 bits. */
const ED25519_SIGNATURE_CHARS = 86;
const CANONICAL_LAST_SIGNATURE_CHAR = /[AQgw]$/;

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
  /** Tolerance for `exp` and `nbf`, in seconds. Default {@link DEFAULT_CLOCK_TOLERANCE_SEC}. */
  clockToleranceSec?: number;
  /** Longest accepted token. Default {@link DEFAULT_MAX_TOKEN_LENGTH}. */
  maxTokenLength?: number;
  /** Cache of verified tokens: `false` disables it; default `{ maxEntries: 10_000 }`. */
  verifiedCache?: boolean | { maxEntries?: number };
  /** Clock in epoch milliseconds, shared with the key set it creates. Default `Date.now`. */
  now?: () => number;
}

/** Counters of a {@link Verifier}. */
export interface VerifierStats {
  /** Calls of verify / verifyToken. */
  readonly verifications: number;
  /** Calls answered from the verified-token cache. */
  readonly cacheHits: number;
  /** Calls that reached token decoding and signature verification (cache misses of well-shaped tokens). */
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
   * Verifies an `Authorization` header value, which must be exactly `Bearer <jwt>`.
   * @throws AuthVerifyError - never returns null.
   */
  verify(authorization: string | undefined | null): Promise<VerifiedToken>;
  /**
   * {@link Verifier.verify} without a promise when none is needed: the steady state (a cache hit
   * while the key set is fresh, or a token signed by a key of the fresh set) returns the verified
   * token itself and throws a failure found on the way; only when the key set must be fetched or
   * awaited (first use, refresh due, unknown kid) does it return a promise, which then rejects on
   * failure. Same checks, same error codes, same counters as `verify`.
   * @throws AuthVerifyError - synchronously, when the answer did not need the key set.
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
 * The token inside an `Authorization` header value. The scheme must be exactly `Bearer` followed by
 * one space and a token without whitespace: lowercase or doubled schemes are refused.
 * @throws AuthVerifyError `missing_token` for no header or an empty credential, `malformed_token` otherwise.
 */
export function extractBearerToken(authorization: string | undefined | null): string {
  if (authorization === undefined || authorization === null || authorization === "") {
    throw new AuthVerifyError("missing_token");
  }
  if (typeof authorization !== "string" || !authorization.startsWith(BEARER_PREFIX)) {
    throw new AuthVerifyError("malformed_token", "The Authorization header is not a Bearer credential");
  }
  if (authorization.length === BEARER_PREFIX.length) throw new AuthVerifyError("missing_token");
  return authorization.slice(BEARER_PREFIX.length);
}

/**
 * Cheap structural checks before any decoding: exactly three base64url segments and an
 * Ed25519-sized, canonically encoded signature. Refuses junk without touching the key set.
 */
function checkCompactShape(token: string): void {
  if (!COMPACT_JWS.test(token)) throw new AuthVerifyError("malformed_token");
  const signature = token.length - token.lastIndexOf(".") - 1;
  if (signature !== ED25519_SIGNATURE_CHARS || !CANONICAL_LAST_SIGNATURE_CHAR.test(token)) {
    throw new AuthVerifyError("invalid_signature");
  }
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

/**
 * Creates the verifier. Nothing is fetched until the first token needs a key.
 *
 * Verification order: presence and length; verified-token cache (a Map lookup and an expiry check);
 * shape; protected header (`crit`, `alg` pinned to EdDSA, embedded-key headers refused, `kid`);
 * the key set's key for the `kid`; the Ed25519 signature with node:crypto (synchronous OpenSSL on
 * the calling thread, no thread-pool hop); the claims (`iss`, `aud`, `exp`, `iat`, `nbf` with the
 * clock tolerance, a non-empty string `sub`). The checks and error codes are those jose
 * `jwtVerify` applied before (see compact-jws.ts). A verified token enters the cache on its
 * second sighting, so a stream of one-shot tokens does not churn it.
 */
export function createVerifier(options: VerifierOptions): Verifier {
  const now = options.now ?? Date.now;
  const toleranceSec = checkTolerance(options.clockToleranceSec ?? DEFAULT_CLOCK_TOLERANCE_SEC);
  const maxTokenLength = checkMaxLength(options.maxTokenLength ?? DEFAULT_MAX_TOKEN_LENGTH);
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

  const rules: ClaimRules = {
    issuers: options.issuer === undefined ? undefined : [options.issuer].flat(),
    audiences: options.audience === undefined ? undefined : [options.audience].flat(),
    toleranceSec,
  };

  let verifications = 0;
  let cacheHits = 0;
  let cryptoVerifications = 0;
  let failures = 0;

  /** Signature, claims, then the cache's admission policy (second sighting). */
  function finish(token: string, header: CheckedHeader, key: KeyObject, nowMs: number): VerifiedToken {
    checkSignature(token, header, key);
    const { claims, sub, exp } = checkClaims(token, header, rules, nowMs);
    const verified: VerifiedToken = Object.freeze({ userId: sub, claims: freezeClaims(claims), kid: header.kid });
    cache.admit(token, verified, (exp + toleranceSec) * 1000, nowMs);
    return verified;
  }

  /**
   * Verifies a token the cache did not answer. Synchronous while the key set is fresh and knows the
   * kid (the steady state); otherwise waits for the key set (first use, refresh, unknown kid).
   */
  function verifyFresh(token: string, nowMs: number): VerifiedToken | Promise<VerifiedToken> {
    checkCompactShape(token);
    cryptoVerifications += 1;
    const header = checkProtectedHeader(token);
    const key = keySet.peekKey(header.kid);
    if (key !== undefined) return finish(token, header, key, nowMs);
    return keySet.getKey(header.kid).then((loaded) => finish(token, header, loaded, nowMs));
  }

  /** Counts and converts a failure of the asynchronous part. */
  function settle(pending: Promise<VerifiedToken>): Promise<VerifiedToken> {
    return pending.catch((error: unknown) => {
      failures += 1;
      throw toAuthVerifyError(error);
    });
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
      return hit;
    }
    return verifyFresh(token, nowMs);
  }

  /** The one implementation behind every entry: synchronous unless the key set must be awaited. */
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
          return hit;
        }
        return settle(revalidateHit(token, hit, nowMs));
      }
      const fresh = verifyFresh(token, nowMs);
      return fresh instanceof Promise ? settle(fresh) : fresh;
    } catch (error) {
      failures += 1;
      throw toAuthVerifyError(error);
    }
  }

  function verifyNow(authorization: string | undefined | null): VerifiedToken | Promise<VerifiedToken> {
    let token: string;
    try {
      if (typeof authorization === "string" && authorization.length > maxTokenLength + BEARER_PREFIX.length) {
        throw new AuthVerifyError("malformed_token");
      }
      token = extractBearerToken(authorization);
    } catch (error) {
      verifications += 1;
      failures += 1;
      throw toAuthVerifyError(error);
    }
    return verifyTokenNow(token);
  }

  // `async` turns a synchronous throw of the shared implementation into a rejection.
  async function verifyToken(token: string | undefined | null): Promise<VerifiedToken> {
    return verifyTokenNow(token);
  }

  async function verify(authorization: string | undefined | null): Promise<VerifiedToken> {
    return verifyNow(authorization);
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
