import { type CryptoKey, importJWK } from "jose";

/** Largest key set body accepted, in characters. A real set of Ed25519 keys is a few hundred bytes. */
export const MAX_JWKS_BODY_CHARS = 1_000_000;

/**
 * Reads a key set response body, refusing it as soon as it grows past {@link MAX_JWKS_BODY_CHARS}
 * bytes (a declared Content-Length over the limit is refused before reading): a misbehaving or
 * hijacked key set endpoint cannot make the verifier buffer an unbounded body. Strict UTF-8.
 * @throws Error "JWKS body is too large" / "JWKS body is not UTF-8"; never echoes the body.
 */
export async function readJwksBody(response: Response): Promise<string> {
  const declared = Number(response.headers.get("content-length") ?? Number.NaN);
  if (Number.isFinite(declared) && declared > MAX_JWKS_BODY_CHARS) {
    await response.body?.cancel().catch(() => undefined);
    throw new Error("JWKS body is too large");
  }
  if (response.body === null) return "";
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_JWKS_BODY_CHARS) {
      await reader.cancel().catch(() => undefined);
      throw new Error("JWKS body is too large");
    }
    chunks.push(value);
  }
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(Buffer.concat(chunks));
  } catch {
    throw new Error("JWKS body is not UTF-8");
  }
}

/** One usable entry of a key set: an Ed25519 signature-verification public key. */
export interface Ed25519JwkEntry {
  readonly kid: string;
  /** The base64url public key. */
  readonly x: string;
}

/** A non-null, non-array object. */
function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * True when a JWK entry is a usable Ed25519 signature-verification key with a string kid.
 * Anything else (RSA, EC, X25519, encryption keys, keys restricted to other operations) is ignored.
 */
function isUsableJwk(jwk: unknown): jwk is { kid: string; x: string } {
  if (!isPlainObject(jwk)) return false;
  if (jwk.kty !== "OKP" || jwk.crv !== "Ed25519") return false;
  if (typeof jwk.kid !== "string" || jwk.kid.length === 0) return false;
  if (typeof jwk.x !== "string" || jwk.x.length === 0) return false;
  if (jwk.use !== undefined && jwk.use !== "sig") return false;
  if (jwk.alg !== undefined && jwk.alg !== "EdDSA" && jwk.alg !== "Ed25519") return false;
  if (jwk.key_ops !== undefined && !(Array.isArray(jwk.key_ops) && jwk.key_ops.includes("verify"))) return false;
  return true;
}

/**
 * Parses a key set body and keeps its usable Ed25519 signature keys, in order (duplicates included;
 * the caller keeps the first of a kid).
 * @throws Error when the body is too large, not JSON, or has no `keys` array. Messages never echo the body.
 */
export function parseJwksBody(text: string): Ed25519JwkEntry[] {
  if (text.length > MAX_JWKS_BODY_CHARS) throw new Error("JWKS body is too large");
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new Error("JWKS body is not JSON");
  }
  if (!isPlainObject(body) || !Array.isArray(body.keys)) throw new Error("JWKS body has no keys array");
  const entries: Ed25519JwkEntry[] = [];
  for (const jwk of body.keys as unknown[]) {
    if (isUsableJwk(jwk)) entries.push({ kid: jwk.kid, x: jwk.x });
  }
  return entries;
}

/** A usable key of a loaded set. */
export interface LoadedKey {
  /** The base64url public key it was imported from. */
  readonly x: string;
  /** The public key imported by jose `importJWK`, once per kid, and handed to jose `jwtVerify`. */
  readonly key: CryptoKey;
}

/**
 * Imports the entries' keys with jose `importJWK`, keeping the first entry of a kid. A kid of
 * `previous` with the same `x` keeps its key object, so a refresh reports it unchanged; an entry
 * jose cannot import (bad `x`) is ignored like any other unusable entry.
 */
export async function importKeys(
  entries: readonly Ed25519JwkEntry[],
  previous: ReadonlyMap<string, LoadedKey> | undefined,
): Promise<Map<string, LoadedKey>> {
  const keys = new Map<string, LoadedKey>();
  for (const jwk of entries) {
    if (keys.has(jwk.kid)) continue;
    const known = previous?.get(jwk.kid);
    if (known !== undefined && known.x === jwk.x) {
      keys.set(jwk.kid, known);
      continue;
    }
    try {
      // Only the public coordinate is imported: a stray "d" or other member is never used.
      const key = await importJWK({ kty: "OKP", crv: "Ed25519", x: jwk.x }, "EdDSA");
      if (!(key instanceof Uint8Array)) keys.set(jwk.kid, { x: jwk.x, key });
    } catch {
      // Unimportable: skipped.
    }
  }
  return keys;
}
