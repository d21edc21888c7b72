import { randomUUID } from "node:crypto";
import { JWT_LIFETIME_SECONDS, type JwtUserClaims } from "@app/contracts";
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
  now?: () => number;
}

/**
 * Signs the JWT handed out on get-session: EdDSA, header `alg`/`kid`/`typ`, claims `sub`,
 * `iat`, `exp` = `iat` + 30 days, `iss`, `aud`, `jti`, and a snapshot of name and email.
 */
export function issueToken(subject: TokenSubject, key: UsableKey, settings: TokenSettings): Promise<string> {
  const iat = Math.floor((settings.now ?? Date.now)() / 1000);
  return new SignJWT({ name: subject.name, email: subject.email } satisfies JwtUserClaims)
    .setProtectedHeader({ alg: key.publicJwk.alg, kid: key.kid, typ: "JWT" })
    .setSubject(subject.id)
    .setIssuer(settings.issuer)
    .setAudience(settings.audience)
    .setIssuedAt(iat)
    .setExpirationTime(iat + JWT_LIFETIME_SECONDS)
    .setJti(randomUUID())
    .sign(key.privateKey);
}
