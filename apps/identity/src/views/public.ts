import type { PublicSession, PublicUser } from "@app/contracts";
import type { Session } from "@app/db";
import type { Request } from "express";
import type { SessionMeta } from "../services/sessions.js";
import type { SignUpUser } from "../services/verified-sign-up.js";

// The public JSON views the routes answer with (packages/contracts/src/auth.ts), shared by every
// route file so no route file imports another.

/**
 * The public JSON view of a user, with better-auth's `twoFactorEnabled` (false for a user shape
 * without it: sign-up's answer for a taken address, services/verified-sign-up.ts, is a new user's).
 */
export function publicUser(user: SignUpUser & { twoFactorEnabled?: boolean }): PublicUser {
  return {
    id: user.id,
    email: user.email,
    name: user.name,
    emailVerified: user.emailVerified,
    image: user.image,
    twoFactorEnabled: user.twoFactorEnabled ?? false,
    createdAt: user.createdAt.toISOString(),
    updatedAt: user.updatedAt.toISOString(),
  };
}

/** The public JSON view of a session (never its secret). */
export function publicSession(session: Session): PublicSession {
  return {
    id: session.id,
    userId: session.userId,
    expiresAt: session.expiresAt.toISOString(),
    createdAt: session.createdAt.toISOString(),
    activeOrganizationId: session.activeOrganizationId ?? null,
    activeTeamId: session.activeTeamId ?? null,
    impersonatedBy: session.impersonatedBy ?? null,
  };
}

/** What a new session records about the client that opened it. */
export function requestMeta(req: Request): SessionMeta {
  return { ipAddress: req.ip, userAgent: req.get("user-agent") };
}
