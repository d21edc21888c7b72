/**
 * BENCH-ONLY COPY of the verifier's previous cold path (not used by the product), measured beside
 * the product's `/jose` in the same run: jose `jwtVerify` pinned to EdDSA (WebCrypto job on the
 * libuv thread pool, several promise hops), the same key resolver checks, every verified token
 * stored in the product's `VerifiedTokenCache` at once (`set`, one LRU eviction per insert at the
 * bound) and claims deep-frozen on every miss. The key set is fetched once (the benchmark never
 * rotates keys).
 */
import {
  AuthVerifyError,
  DEFAULT_VERIFIED_CACHE_MAX_ENTRIES,
  extractBearerToken,
  parseJwksBody,
  toAuthVerifyError,
  type VerifiedToken,
  VerifiedTokenCache,
} from "@app/auth-verify";
import { type CompactJWSHeaderParameters, type CryptoKey, importJWK, jwtVerify } from "jose";

const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
const CANONICAL_LAST_SIGNATURE_CHAR = /[AQgw]$/;
const FORBIDDEN_HEADERS = ["jwk", "jku", "x5u", "x5c", "x5t", "x5t#S256", "b64", "crit"];
const TOLERANCE_SEC = 5;

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/** Options of {@link createLegacyVerifier}. */
export interface LegacyVerifierOptions {
  jwksUrl: string;
  issuer: string;
  audience: string;
}

/** Counters, as the product verifier's. */
export interface LegacyVerifierStats {
  verifications: number;
  cacheHits: number;
}

/** The previous verifier's cache-miss path, for in-run before/after comparisons. */
export function createLegacyVerifier(options: LegacyVerifierOptions) {
  const cache = new VerifiedTokenCache(DEFAULT_VERIFIED_CACHE_MAX_ENTRIES);
  let keys: Promise<Map<string, CryptoKey>> | undefined;
  let verifications = 0;
  let cacheHits = 0;

  async function load(): Promise<Map<string, CryptoKey>> {
    const res = await fetch(options.jwksUrl);
    const out = new Map<string, CryptoKey>();
    for (const jwk of parseJwksBody(await res.text())) {
      const key = await importJWK({ kty: "OKP", crv: "Ed25519", x: jwk.x }, "EdDSA");
      if (!(key instanceof Uint8Array)) out.set(jwk.kid, key);
    }
    return out;
  }

  async function resolveKey(header: CompactJWSHeaderParameters): Promise<CryptoKey> {
    for (const name of FORBIDDEN_HEADERS) if (Object.hasOwn(header, name)) throw new AuthVerifyError("malformed_token");
    const kid: unknown = header.kid;
    if (kid === undefined) throw new AuthVerifyError("unknown_key");
    if (typeof kid !== "string" || kid.length === 0) throw new AuthVerifyError("malformed_token");
    keys ??= load();
    const key = (await keys).get(kid);
    if (key === undefined) throw new AuthVerifyError("unknown_key");
    return key;
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
    if (token.length - token.lastIndexOf(".") - 1 !== 86 || !CANONICAL_LAST_SIGNATURE_CHAR.test(token)) {
      throw new AuthVerifyError("invalid_signature");
    }
    let result: Awaited<ReturnType<typeof jwtVerify>>;
    try {
      result = await jwtVerify(token, resolveKey, {
        algorithms: ["EdDSA"],
        requiredClaims: ["exp", "iat", "sub"],
        clockTolerance: TOLERANCE_SEC,
        issuer: options.issuer,
        audience: options.audience,
        currentDate: new Date(nowMs),
      });
    } catch (error) {
      throw toAuthVerifyError(error);
    }
    const { sub, exp } = result.payload;
    const kid = result.protectedHeader.kid;
    if (typeof sub !== "string" || sub.length === 0 || typeof exp !== "number" || typeof kid !== "string") {
      throw new AuthVerifyError("invalid_claims");
    }
    const verified: VerifiedToken = Object.freeze({ userId: sub, claims: deepFreeze(result.payload), kid });
    cache.set(token, verified, (exp + TOLERANCE_SEC) * 1000, nowMs);
    return verified;
  }

  return {
    verify,
    /** The previous path had no synchronous answer: always a promise. */
    verifyNow: verify,
    stats: (): LegacyVerifierStats => ({ verifications, cacheHits }),
    close: () => cache.clear(),
  };
}
