import { randomUUID } from "node:crypto";
import { JWT_LIFETIME_SECONDS, type JwtActorClaim, type JwtUserClaims } from "@app/contracts";
import { SignJWT } from "jose";
import type { UsableKey } from "./key-set.js";

/** The user facts a JWT carries: who the caller is, as of issuance. Never roles or tier. */
export interface TokenSubject {
  id: string;
  email: string;
  name: string;
}

/** Settings of {@link issueToken}. */
export interface TokenSettings {
  issuer: string;
  audience: string;
  /** `exp` - `iat` in seconds (JWT_EXPIRES_IN); the contract's 30 days when absent. */
  lifetimeSeconds?: number;
  now?: () => number;
}

/**
 * Signs the JWT handed out on get-session: EdDSA, header `alg`/`kid`/`typ`, claims `sub`,
 * `iat`, `exp` = `iat` + the lifetime (30 days unless JWT_EXPIRES_IN), `iss`, `aud`, `jti`, and a
 * snapshot of name and email. `actorId` (an impersonation session's admin) becomes the RFC 8693
 * actor claim `act: { sub }`.
 */
export function issueToken(subject: TokenSubject, key: UsableKey, settings: TokenSettings, actorId?: string): Promise<string> {
  const iat = Math.floor((settings.now ?? Date.now)() / 1000);
  const claims: JwtUserClaims & { act?: JwtActorClaim } = { name: subject.name, email: subject.email };
  if (actorId !== undefined) claims.act = { sub: actorId };
  return new SignJWT(claims)
    .setProtectedHeader({ alg: key.publicJwk.alg, kid: key.kid, typ: "JWT" })
    .setSubject(subject.id)
    .setIssuer(settings.issuer)
    .setAudience(settings.audience)
    .setIssuedAt(iat)
    .setExpirationTime(iat + (settings.lifetimeSeconds ?? JWT_LIFETIME_SECONDS))
    .setJti(randomUUID())
    .sign(key.privateKey);
}
