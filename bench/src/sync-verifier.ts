/**
 * BENCH-ONLY PROTOTYPE of the proposed cold-path fix for packages/auth-verify (not used by the
 * product): the same checks as `createVerifier` (shape, forbidden headers, EdDSA only, kid lookup
 * in the product's RemoteKeySet, signature, exp/nbf/iat/iss/aud/sub with clock tolerance, the
 * product's VerifiedTokenCache), but the signature is checked with synchronous node:crypto
 * `verify()` (OpenSSL, on the calling thread) on a KeyObject converted once per key, and the
 * header and payload are decoded directly, instead of jose `jwtVerify` (WebCrypto job on the
 * libuv thread pool, several promise hops, generic JOSE processing).
 */
import { verify as ed25519Verify, KeyObject } from "node:crypto";
import { AuthVerifyError, extractBearerToken, RemoteKeySet, type VerifiedToken, VerifiedTokenCache } from "@app/auth-verify";

const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
const CANONICAL_LAST_SIGNATURE_CHAR = /[AQgw]$/;
const FORBIDDEN_HEADERS = ["jwk", "jku", "x5u", "x5c", "x5t", "x5t#S256", "b64", "crit"];

function decodeJson(segment: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(segment, "base64url").toString("utf8"));
  } catch {
    throw new AuthVerifyError("malformed_token");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new AuthVerifyError("malformed_token");
  return value as Record<string, unknown>;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

export interface SyncVerifierOptions {
  jwksUrl: string;
  issuer: string;
  audience: string;
  clockToleranceSec?: number;
  cacheMaxEntries?: number;
}

export function createSyncVerifier(options: SyncVerifierOptions) {
  const tolerance = options.clockToleranceSec ?? 5;
  const keySet = new RemoteKeySet({ url: options.jwksUrl });
  const cache = new VerifiedTokenCache(options.cacheMaxEntries ?? 10_000);
  keySet.onRefresh((event) => cache.dropKids(event.droppedKids));
  const keyObjects = new WeakMap<object, KeyObject>();
  let verifications = 0;
  let cacheHits = 0;

  function checkClaims(claims: Record<string, unknown>, nowSec: number): { sub: string; exp: number } {
    const { exp, iat, nbf, sub, iss, aud } = claims;
    if (typeof exp !== "number" || typeof iat !== "number") throw new AuthVerifyError("invalid_claims");
    if (typeof sub !== "string" || sub.length === 0) throw new AuthVerifyError("invalid_claims");
    if (exp <= nowSec - tolerance) throw new AuthVerifyError("token_expired");
    if (nbf !== undefined && (typeof nbf !== "number" || nbf > nowSec + tolerance)) throw new AuthVerifyError("token_not_yet_valid");
    if (iss !== options.issuer) throw new AuthVerifyError("invalid_claims");
    if (!(aud === options.audience || (Array.isArray(aud) && aud.includes(options.audience)))) throw new AuthVerifyError("invalid_claims");
    return { sub, exp };
  }

  async function verify(authorization: string | undefined): Promise<VerifiedToken> {
    verifications += 1;
    const token = extractBearerToken(authorization);
    const nowMs = Date.now();
    const hit = cache.get(token, nowMs);
    if (hit !== undefined) {
      cacheHits += 1;
      return hit;
    }
    if (token.length > 8192 || !COMPACT_JWS.test(token)) throw new AuthVerifyError("malformed_token");
    const firstDot = token.indexOf(".");
    const lastDot = token.lastIndexOf(".");
    if (token.length - lastDot - 1 !== 86 || !CANONICAL_LAST_SIGNATURE_CHAR.test(token)) throw new AuthVerifyError("invalid_signature");
    const header = decodeJson(token.slice(0, firstDot));
    if (header.alg !== "EdDSA") throw new AuthVerifyError("invalid_signature", "The token algorithm is not accepted");
    for (const name of FORBIDDEN_HEADERS) if (Object.hasOwn(header, name)) throw new AuthVerifyError("malformed_token");
    const kid = header.kid;
    if (kid === undefined) throw new AuthVerifyError("unknown_key");
    if (typeof kid !== "string" || kid.length === 0) throw new AuthVerifyError("malformed_token");
    const cryptoKey = await keySet.getKey(kid);
    let key = keyObjects.get(cryptoKey);
    if (!key) {
      key = KeyObject.from(cryptoKey);
      keyObjects.set(cryptoKey, key);
    }
    const signature = Buffer.from(token.slice(lastDot + 1), "base64url");
    if (!ed25519Verify(null, Buffer.from(token.slice(0, lastDot), "latin1"), key, signature))
      throw new AuthVerifyError("invalid_signature");
    const claims = decodeJson(token.slice(firstDot + 1, lastDot));
    const { sub, exp } = checkClaims(claims, Math.floor(nowMs / 1000));
    const verified: VerifiedToken = Object.freeze({ userId: sub, claims: deepFreeze(claims), kid });
    cache.set(token, verified, (exp + tolerance) * 1000, nowMs);
    return verified;
  }

  return {
    verify,
    stats: () => ({ verifications, cacheHits, cache: cache.stats() }),
    close: () => keySet.close(),
  };
}
