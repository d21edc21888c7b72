import type { JwtClaims } from "./auth.js";

/**
 * A public key exactly as identity publishes it at GET /api/auth/jwks (apps/identity/src/services/key-set.ts):
 * an Ed25519 signature key. Readers accept more (publicJwkSchema of auth.ts parses any
 * `use: "sig"` key) and keep only what they can verify with (packages/auth-verify/src/jwks-body.ts).
 */
export interface PublicJwk {
  kty: "OKP";
  crv: "Ed25519";
  /** The base64url public key. */
  x: string;
  kid: string;
  alg: "EdDSA";
  use: "sig";
}

/**
 * The user facts identity signs into every JWT beside the registered claims (`sub`, `iat`, `exp`,
 * `iss`, `aud`, `jti`), as of issuance: a snapshot the API may show, never trust (`sub` alone is
 * trusted).
 */
export type JwtUserClaims = Required<Pick<JwtClaims, "name" | "email">>;
