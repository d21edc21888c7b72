import type { ManagedRole, ManagedSession, ManagedUser } from "@app/contracts";
import type { Session, User } from "@app/db";
import { publicUser } from "../views/public.js";

/** A user as the admin routes show it: the public user, its role and its ban. */
export function managedUser(user: User, role: ManagedRole): ManagedUser {
  return {
    ...publicUser(user),
    role,
    banned: user.banned,
    banReason: user.banReason,
    banExpires: user.banExpires?.toISOString() ?? null,
  };
}

/** The session fields an admin sees: never the secret (`token` is the session's id, as list-sessions). */
export type ManagedSessionFields = Pick<
  Session,
  "id" | "userId" | "createdAt" | "updatedAt" | "expiresAt" | "ipAddress" | "userAgent" | "impersonatedBy"
>;

export const MANAGED_SESSION_FIELDS = {
  id: true,
  userId: true,
  createdAt: true,
  updatedAt: true,
  expiresAt: true,
  ipAddress: true,
  userAgent: true,
  impersonatedBy: true,
} as const;

/** A session as list-user-sessions and impersonate-user show it. */
export function managedSession(session: ManagedSessionFields): ManagedSession {
  return {
    id: session.id,
    token: session.id,
    userId: session.userId,
    createdAt: session.createdAt.toISOString(),
    updatedAt: session.updatedAt.toISOString(),
    expiresAt: session.expiresAt.toISOString(),
    ipAddress: session.ipAddress,
    userAgent: session.userAgent,
    impersonatedBy: session.impersonatedBy,
  };
}
