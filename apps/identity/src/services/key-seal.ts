import { createPrivateKey, generateKeyPairSync, type KeyObject, randomUUID } from "node:crypto";
import type { PublicJwk } from "@app/contracts";
import type { Jwks } from "@app/db";
import type { SecretBox } from "@app/secret-box";

/**
 * How a signing key pair becomes a jwks row and back (key-set.ts decides which rows exist): the
 * private key is sealed under AUTH_SECRET with its kid as context, so a row opens only with the
 * secret that made it and only under its own id.
 */

/** Signing algorithm of every key. */
export const KEY_ALG = "EdDSA";

/** A usable key: the current AUTH_SECRET decrypts it. */
export interface UsableKey {
  kid: string;
  createdAt: Date;
  publicJwk: PublicJwk;
  privateKey: KeyObject;
}

/** A fresh Ed25519 key pair as the jwks row to create: public JWK in clear, private PEM sealed. */
export function newKeyRow(box: SecretBox, now: Date) {
  const kid = randomUUID();
  const { publicKey, privateKey } = generateKeyPairSync("ed25519");
  const jwk = publicKey.export({ format: "jwk" });
  const publicJwk: PublicJwk = { kty: "OKP", crv: "Ed25519", x: String(jwk.x), kid, alg: KEY_ALG, use: "sig" };
  const pem = privateKey.export({ format: "pem", type: "pkcs8" }).toString();
  return { id: kid, alg: KEY_ALG, publicKey: JSON.stringify(publicJwk), privateKey: box.seal(pem, kid), createdAt: now };
}

/** The row's key, or null when `box` cannot open it (another AUTH_SECRET, another algorithm, a damaged row). */
export function openKeyRow(box: SecretBox, row: Jwks): UsableKey | null {
  const pem = row.alg === KEY_ALG ? box.open(row.privateKey, row.id) : undefined;
  if (!pem) return null;
  try {
    return {
      kid: row.id,
      createdAt: row.createdAt,
      publicJwk: JSON.parse(row.publicKey) as PublicJwk,
      privateKey: createPrivateKey(pem),
    };
  } catch {
    return null;
  }
}
