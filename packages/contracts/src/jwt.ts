import { z } from "zod";
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

/**
 * The actor claim (RFC 8693 section 4.1) of a JWT issued from an impersonation session: `sub` is
 * the admin acting as the token's `sub` (apps/identity/src/admin/). A token without `act` is the
 * user's own. Like the user facts, a reader may show it; `sub` alone decides whose data it is.
 */
export interface JwtActorClaim {
  sub: string;
}

/** Parses an `act` claim: an object with a non-empty string `sub` (other members are ignored). */
export const jwtActorClaimSchema = z.object({ sub: z.string().min(1) });
