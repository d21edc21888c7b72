/**
 * The cold path of the verifier: one compact JWT, not answered by the verified-token cache, checked
 * by jose `jwtVerify` with a key imported by jose and resolved by `kid` from the remote key set.
 * jose does every cryptographic and claim check; this module adds only what jose lacks: a cheap
 * shape check before any decoding, the refusal of headers that name or carry keys, the `kid` rules,
 * a bound on the lifetime `exp - iat`, and a non-empty string `sub`.
 */
import { type CompactJWSHeaderParameters, type CryptoKey, type JWTPayload, type JWTVerifyOptions, jwtVerify } from "jose";
import { AuthVerifyError } from "./errors.js";
import type { RemoteKeySet } from "./remote-key-set.js";

/** The only accepted JWS algorithm. Not configurable. */
export const ALLOWED_ALGORITHMS: readonly ["EdDSA"] = Object.freeze(["EdDSA"] as const);
/**
 * The `typ` header a token carries unless the verifier is told another (apps/identity/src/services/tokens.ts
 * signs `typ: "JWT"`); an OAuth access token (RFC 9068) carries `at+jwt` and is refused here.
 */
export const TOKEN_TYPE = "JWT";
/** Claims every token must carry. */
export const REQUIRED_CLAIMS: readonly string[] = Object.freeze(["exp", "iat", "sub"]);
/**
 * Header parameters that would let a token choose or carry its own key, or change how it is
 * processed. A token with any of them is refused as `malformed_token`; they are never used.
 */
export const FORBIDDEN_HEADERS: readonly string[] = Object.freeze(["jwk", "jku", "x5u", "x5c", "x5t", "x5t#S256", "b64", "crit"]);

/** Three non-empty base64url segments, no padding. */
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
/** An Ed25519 signature is 64 bytes: 86 base64url characters whose last one carries 2 bits. */
const ED25519_SIGNATURE_CHARS = 86;
/** The canonical last characters of such a signature (its low 4 bits are zero). */
const CANONICAL_LAST_SIGNATURE_CHARS = "AQgw";

/** What the claim checks are configured with. */
export interface JwtCheckOptions {
  /** Where keys are resolved by `kid`. */
  readonly keySet: RemoteKeySet;
  /** Accepted `iss` value(s); unchecked when undefined. */
  readonly issuer: string | string[] | undefined;
  /** Accepted `aud` value(s), one of which the token must carry; unchecked when undefined. */
  readonly audience: string | string[] | undefined;
  /** The one accepted `typ` header ({@link TOKEN_TYPE} unless the verifier says otherwise). */
  readonly tokenType: string;
  /** Clock tolerance for `exp`, `nbf`, `iat` and the lifetime, in seconds. */
  readonly toleranceSec: number;
  /** Longest accepted `exp - iat` and `now - iat`, in seconds. */
  readonly maxLifetimeSec: number;
  /**
   * True when the verifier runs on an injected clock: jose is then told the time of each call.
   * Otherwise jose reads the same system clock itself (no Date and options object per call).
   */
  readonly injectedClock: boolean;
}

/** What jose answers for a token (its payload and protected header). */
export type JoseResult = { payload: JWTPayload; protectedHeader: CompactJWSHeaderParameters };

/** The cold-path check of one token: jose's verification, then the verifier's own checks. */
export interface JwtCheck {
  start(token: string, nowMs: number): Promise<JoseResult>;
  finish(result: JoseResult): CheckedJwt;
}

/** A token jose verified, with the claims the verifier relies on. */
export interface CheckedJwt {
  readonly claims: JWTPayload;
  readonly sub: string;
  readonly exp: number;
  readonly kid: string;
}

/**
 * Cheap structural checks before any decoding: exactly three base64url segments and an
 * Ed25519-sized, canonically encoded signature. Refuses junk without touching the key set or jose.
 * @throws AuthVerifyError `malformed_token`, `invalid_signature`
 */
export function checkCompactShape(token: string): void {
  if (!COMPACT_JWS.test(token)) throw new AuthVerifyError("malformed_token");
  const signature = token.length - token.lastIndexOf(".") - 1;
  if (signature !== ED25519_SIGNATURE_CHARS || !CANONICAL_LAST_SIGNATURE_CHARS.includes(token.charAt(token.length - 1))) {
    throw new AuthVerifyError("invalid_signature");
  }
}

const claimError = (name: string): AuthVerifyError =>
  new AuthVerifyError("invalid_claims", `The "${name}" claim is missing or not acceptable`);

/**
 * The check of one token whose shape passed {@link checkCompactShape}. jose parses the protected
 * header, refuses `crit` it does not understand and any `alg` but EdDSA, then asks the key resolver
 * below (forbidden headers, `kid`, key set); it verifies the signature, parses the claims and checks
 * `typ`, the presence of `iss`/`aud`/`iat`/`sub`/`exp`, the values of `iss` and `aud`, `nbf` and `exp`
 * with the tolerance, and `iat` (`maxTokenAge`: not in the future beyond the tolerance, not older
 * than the longest lifetime). Then: `exp` finite and `exp - iat` within the longest lifetime (plus
 * the tolerance), and a non-empty string `sub`.
 * @returns `start`, which checks the shape (throwing) and returns jose's own promise, and `finish`,
 * the synchronous checks of what jose verified: the caller runs `finish` in the step that handles
 * jose's answer, so the cold path costs no promise of its own here. Both fail with jose's errors or
 * an AuthVerifyError (see errors.ts).
 */
export function createJwtCheck(options: JwtCheckOptions): JwtCheck {
  const { keySet, toleranceSec, maxLifetimeSec, injectedClock } = options;
  const base: JWTVerifyOptions = {
    algorithms: [...ALLOWED_ALGORITHMS],
    typ: options.tokenType,
    requiredClaims: [...REQUIRED_CLAIMS],
    clockTolerance: toleranceSec,
    maxTokenAge: maxLifetimeSec,
    ...(options.issuer === undefined ? {} : { issuer: options.issuer }),
    ...(options.audience === undefined ? {} : { audience: options.audience }),
  };

  /** jose calls this after the header passed its own checks; a thrown error ends verification. */
  const resolveKey = (header: CompactJWSHeaderParameters): CryptoKey | Promise<CryptoKey> => {
    for (const name of FORBIDDEN_HEADERS) {
      if (Object.hasOwn(header, name)) {
        throw new AuthVerifyError("malformed_token", `The token header parameter "${name}" is not accepted`);
      }
    }
    const kid: unknown = header.kid;
    if (kid === undefined) throw new AuthVerifyError("unknown_key", "The token names no key id");
    if (typeof kid !== "string" || kid.length === 0) {
      throw new AuthVerifyError("malformed_token", "The token key id is not a non-empty string");
    }
    return keySet.peekKey(kid) ?? keySet.getKey(kid);
  };

  const finish = ({ payload, protectedHeader }: JoseResult): CheckedJwt => {
    // jose has checked that both are present numbers, `iat` not in the future: a non-finite or
    // far-off `exp` is what remains (JSON `1e999` parses to Infinity).
    const exp = payload.exp as number;
    const iat = payload.iat as number;
    if (!Number.isFinite(exp) || exp - iat > maxLifetimeSec + toleranceSec) throw claimError("exp");
    const sub = payload.sub;
    if (typeof sub !== "string" || sub.length === 0) {
      throw new AuthVerifyError("invalid_claims", 'The "sub" claim must be a non-empty string');
    }
    return { claims: payload, sub, exp, kid: protectedHeader.kid as string };
  };

  const start = (token: string, nowMs: number): Promise<JoseResult> => {
    checkCompactShape(token);
    const options = injectedClock ? { ...base, currentDate: new Date(nowMs) } : base;
    return jwtVerify(token, resolveKey, options);
  };
  return { start, finish };
}
