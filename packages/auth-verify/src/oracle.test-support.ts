/**
 * TEST-ONLY ORACLE (excluded from the build by tsconfig.build.json, never exported): an independent
 * hand-written compact EdDSA JWT verifier on node:crypto, kept as the reference the product's jose
 * path is compared with in verify-differential.test.ts. Production code never imports it.
 *
 * The checks and their order reproduce jose `jwtVerify` pinned to EdDSA with the verifier's
 * options (jwt-check.ts), so every input must get the same error code and message from both:
 * shape, header decoding, `crit`, `alg`, forbidden headers and `kid`, key lookup, signature,
 * payload decoding, `typ`, presence of the required claims, `iss`, `aud`, `iat`, `nbf`, `exp`, the
 * age of `iat` (jose `maxTokenAge`), the lifetime `exp - iat`, then a non-empty string `sub`.
 */
import { type KeyObject, verify as verifySignature } from "node:crypto";
import type { JWTPayload } from "jose";
import { AuthVerifyError } from "./errors.js";

/** Three non-empty base64url segments, no padding. */
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/**
 * Header parameters that would let a token choose or carry its own key, or change how it is
 * processed. A token with any of them is refused as `malformed_token`; they are never used.
 */
export const FORBIDDEN_HEADERS = ["jwk", "jku", "x5u", "x5c", "x5t", "x5t#S256", "b64", "crit"] as const;

/** Strict UTF-8 (a bad byte is an error, not U+FFFD); a leading BOM is dropped, as jose's decoder does. */
const strictUtf8 = new TextDecoder("utf-8", { fatal: true });
/** Largest time value a `Date` can hold (ECMAScript TimeClip). */
const MAX_TIME_MS = 8.64e15;

/** The parts of a compact JWS whose protected header passed every check up to the key lookup. */
export interface CheckedHeader {
  /** The key id the header names. */
  readonly kid: string;
  /** Index of the dot between payload and signature. */
  readonly lastDot: number;
  /** Index of the dot between header and payload. */
  readonly firstDot: number;
  /** The `typ` header, unchecked until the claims are. */
  readonly typ: unknown;
}

/** Claim checks configured on the verifier. */
export interface ClaimRules {
  /** Accepted `iss` values; unchecked when undefined. */
  readonly issuers: readonly string[] | undefined;
  /** Accepted `aud` values (one must be present in the token); unchecked when undefined. */
  readonly audiences: readonly string[] | undefined;
  /** Clock tolerance for `exp`, `nbf`, `iat` and the lifetime, in seconds. */
  readonly toleranceSec: number;
  /** Longest accepted `exp - iat` and `now - iat`, in seconds. */
  readonly maxLifetimeSec: number;
}

/** A verified token's claims with the two the verifier relies on, already checked. */
export interface CheckedClaims {
  readonly claims: JWTPayload;
  readonly sub: string;
  readonly exp: number;
}

const malformed = (): AuthVerifyError => new AuthVerifyError("malformed_token");
const claimError = (name: string): AuthVerifyError =>
  new AuthVerifyError("invalid_claims", `The "${name}" claim is missing or not acceptable`);

/** True for what `JSON.parse` returns for an object (not an array, not null). */
function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Decodes one base64url segment (already known to hold only base64url characters) to a JSON
 * object. A length of 4n+1 is not base64, invalid UTF-8 is refused, and so is any JSON that is
 * not an object.
 * @throws AuthVerifyError `malformed_token`
 */
function decodeJsonSegment(segment: string): Record<string, unknown> {
  if (segment.length % 4 === 1) throw malformed();
  let value: unknown;
  try {
    value = JSON.parse(strictUtf8.decode(Buffer.from(segment, "base64url")));
  } catch {
    throw malformed();
  }
  if (!isJsonObject(value)) throw malformed();
  return value;
}

/** Validates `crit` as JWS requires: a non-empty array of non-empty names, each understood (only `b64`). */
function checkCrit(header: Record<string, unknown>): void {
  const crit = header.crit;
  if (crit === undefined) return;
  if (!Array.isArray(crit) || crit.length === 0 || crit.some((name) => typeof name !== "string" || name.length === 0)) {
    throw malformed();
  }
  for (const name of crit) {
    if (name !== "b64" || !Object.hasOwn(header, name) || header[name] === undefined) throw malformed();
  }
  if (typeof header.b64 !== "boolean") throw malformed();
}

/**
 * Decodes and checks the protected header of a token whose shape was checked (three base64url
 * segments, an Ed25519-sized signature): JSON object, `crit`, `alg` exactly `EdDSA`, no forbidden
 * parameter, a non-empty string `kid`.
 * @throws AuthVerifyError `malformed_token`, `invalid_signature` (another alg), `unknown_key` (no kid)
 */
export function checkProtectedHeader(token: string): CheckedHeader {
  const firstDot = token.indexOf(".");
  const lastDot = token.lastIndexOf(".");
  const header = decodeJsonSegment(token.slice(0, firstDot));
  checkCrit(header);
  const alg = header.alg;
  if (typeof alg !== "string" || alg.length === 0) throw malformed();
  if (alg !== "EdDSA") throw new AuthVerifyError("invalid_signature", "The token algorithm is not accepted");
  for (const name of FORBIDDEN_HEADERS) {
    if (Object.hasOwn(header, name)) {
      throw new AuthVerifyError("malformed_token", `The token header parameter "${name}" is not accepted`);
    }
  }
  const kid = header.kid;
  if (kid === undefined) throw new AuthVerifyError("unknown_key", "The token names no key id");
  if (typeof kid !== "string" || kid.length === 0) {
    throw new AuthVerifyError("malformed_token", "The token key id is not a non-empty string");
  }
  return { kid, firstDot, lastDot, typ: header.typ };
}

/**
 * Checks the Ed25519 signature of `token` with `key`, synchronously.
 * @throws AuthVerifyError `invalid_signature`
 */
export function checkSignature(token: string, header: CheckedHeader, key: KeyObject): void {
  let valid = false;
  try {
    const signingInput = Buffer.from(token.slice(0, header.lastDot), "latin1");
    const signature = Buffer.from(token.slice(header.lastDot + 1), "base64url");
    valid = verifySignature(null, signingInput, key, signature);
  } catch {
    valid = false;
  }
  if (!valid) throw new AuthVerifyError("invalid_signature");
}

/** Seconds since the epoch of a clock reading, as `new Date(ms)` would see it (NaN when out of range). */
function epochSeconds(nowMs: number): number {
  if (!Number.isFinite(nowMs) || Math.abs(nowMs) > MAX_TIME_MS) return Number.NaN;
  return Math.floor(Math.trunc(nowMs) / 1000);
}

/** A NumericDate claim: absent is fine unless required by presence checks; present must be a number. */
function numericClaim(claims: Record<string, unknown>, name: string): number | undefined {
  const value = claims[name];
  if (value === undefined) return undefined;
  if (typeof value !== "number") throw claimError(name);
  return value;
}

/**
 * Decodes the payload of a token whose signature was verified and checks its claims: presence of
 * `iss` / `aud` (when configured), `sub`, `iat` and `exp`; `iss` and `aud` values; `iat`, `nbf` and
 * `exp` types; `nbf` and `exp` against `nowMs` with the tolerance; finally a non-empty string `sub`.
 * @throws AuthVerifyError `malformed_token`, `invalid_claims`, `token_expired`, `token_not_yet_valid`
 */
export function checkClaims(token: string, header: CheckedHeader, rules: ClaimRules, nowMs: number): CheckedClaims {
  const claims = decodeJsonSegment(token.slice(header.firstDot + 1, header.lastDot));
  const typ = header.typ;
  if (typeof typ !== "string" || normalizeTyp(typ) !== "application/jwt") throw claimError("typ");
  const required = ["iss", "aud", "iat", "sub", "exp"] as const;
  for (const name of required) {
    if (name === "iss" && rules.issuers === undefined) continue;
    if (name === "aud" && rules.audiences === undefined) continue;
    if (!Object.hasOwn(claims, name)) throw claimError(name);
  }
  if (rules.issuers !== undefined && !rules.issuers.includes(claims.iss as string)) throw claimError("iss");
  if (rules.audiences !== undefined && !audienceMatches(claims.aud, rules.audiences)) throw claimError("aud");
  const nowSec = epochSeconds(nowMs);
  if (Number.isNaN(nowSec)) {
    throw new AuthVerifyError("malformed_token", undefined, { cause: new TypeError("The clock reading is not a valid time") });
  }
  numericClaim(claims, "iat");
  const nbf = numericClaim(claims, "nbf");
  if (nbf !== undefined && nbf > nowSec + rules.toleranceSec) throw new AuthVerifyError("token_not_yet_valid");
  const exp = numericClaim(claims, "exp");
  if (exp === undefined) throw new AuthVerifyError("invalid_claims", 'The "exp" claim is missing');
  if (exp <= nowSec - rules.toleranceSec) throw new AuthVerifyError("token_expired");
  const iat = claims.iat as number;
  if (nowSec - iat - rules.toleranceSec > rules.maxLifetimeSec) throw new AuthVerifyError("token_expired");
  if (nowSec - iat < -rules.toleranceSec) throw claimError("iat");
  if (!Number.isFinite(exp) || exp - iat > rules.maxLifetimeSec + rules.toleranceSec) throw claimError("exp");
  const sub = claims.sub;
  if (typeof sub !== "string" || sub.length === 0) {
    throw new AuthVerifyError("invalid_claims", 'The "sub" claim must be a non-empty string');
  }
  return { claims: claims as JWTPayload, sub, exp };
}

/** `JWT`, `jwt` and `application/jwt` name one media type. */
function normalizeTyp(value: string): string {
  const lower = value.toLowerCase();
  return value.includes("/") ? lower : `application/${lower}`;
}

/** A string `aud` must be accepted; an array `aud` must contain an accepted value. */
function audienceMatches(aud: unknown, accepted: readonly string[]): boolean {
  if (typeof aud === "string") return accepted.includes(aud);
  if (Array.isArray(aud)) return accepted.some((value) => aud.includes(value));
  return false;
}

/**
 * The whole cold path of the oracle: shape, header, key, signature, claims.
 * @param keyFor - the key of a kid, or undefined for an unknown kid
 * @throws AuthVerifyError with the code and message the product must give
 */
export function oracleVerify(
  token: string,
  keyFor: (kid: string) => KeyObject | undefined,
  rules: ClaimRules,
  nowMs: number,
): CheckedClaims {
  if (!COMPACT_JWS.test(token)) throw malformed();
  const signature = token.length - token.lastIndexOf(".") - 1;
  if (signature !== 86 || !/[AQgw]$/.test(token)) throw new AuthVerifyError("invalid_signature");
  const header = checkProtectedHeader(token);
  const key = keyFor(header.kid);
  if (key === undefined) throw new AuthVerifyError("unknown_key");
  checkSignature(token, header, key);
  return checkClaims(token, header, rules, nowMs);
}
