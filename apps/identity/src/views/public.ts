import type { PublicSession } from "@app/contracts";
import type { Session } from "@app/db";
import type { Request } from "express";
import type { SessionMeta } from "../services/sessions.js";

export { publicUser } from "./public-user.js";

// The public JSON views the routes answer with (packages/contracts/src/auth.ts), shared by every
// route file so no route file imports another.

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
