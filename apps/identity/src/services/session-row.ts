import type { Session, User } from "@app/db";
import type { RawQuery } from "./raw-query.js";

// get-session's one read (services/sessions.ts `validate`): the session and its user by the
// session's id, as raw SQL, mapped to the Prisma shapes the rest of identity uses.

/** The session row and its user's row, as one statement returns them. */
export interface SessionUserRow {
  id: string;
  secret_hash: Uint8Array;
  user_id: string;
  expires_at: Date;
  created_at: Date;
  updated_at: Date;
  ip_address: string | null;
  user_agent: string | null;
  active_organization_id: string | null;
  active_team_id: string | null;
  impersonated_by: string | null;
  u_id: string;
  u_email: string;
  u_name: string;
  u_email_verified: boolean;
  u_image: string | null;
  u_two_factor_enabled: boolean;
  u_banned: boolean;
  u_ban_reason: string | null;
  u_ban_expires: Date | null;
  u_created_at: Date;
  u_updated_at: Date;
}

/** get-session's session read: the session and its user by session id, one round trip. */
const SESSION_WITH_USER = `SELECT s."id", s."secret_hash", s."user_id", s."expires_at", s."created_at", s."updated_at",
  s."ip_address", s."user_agent", s."active_organization_id", s."active_team_id", s."impersonated_by", u."id" AS "u_id", u."email" AS "u_email", u."name" AS "u_name",
  u."email_verified" AS "u_email_verified", u."image" AS "u_image", u."two_factor_enabled" AS "u_two_factor_enabled", u."banned" AS "u_banned", u."ban_reason" AS "u_ban_reason",
  u."ban_expires" AS "u_ban_expires", u."created_at" AS "u_created_at", u."updated_at" AS "u_updated_at"
FROM "session" s JOIN "user" u ON u."id" = s."user_id" WHERE s."id" = $1`;

export function sessionQuery(id: string): RawQuery {
  return { name: "identity-session-with-user", text: SESSION_WITH_USER, values: [id] };
}

/** Maps the row to the Prisma shapes the rest of identity uses (bytes as a plain Uint8Array). */
export function toSessionAndUser(row: SessionUserRow): { session: Session; user: User } {
  return {
    session: {
      id: row.id,
      secretHash: new Uint8Array(row.secret_hash),
      userId: row.user_id,
      expiresAt: row.expires_at,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
      ipAddress: row.ip_address,
      userAgent: row.user_agent,
      activeOrganizationId: row.active_organization_id,
      activeTeamId: row.active_team_id,
      impersonatedBy: row.impersonated_by,
    },
    user: {
      id: row.u_id,
      email: row.u_email,
      name: row.u_name,
      emailVerified: row.u_email_verified,
      image: row.u_image,
      twoFactorEnabled: row.u_two_factor_enabled,
      banned: row.u_banned,
      banReason: row.u_ban_reason,
      banExpires: row.u_ban_expires,
      createdAt: row.u_created_at,
      updatedAt: row.u_updated_at,
    },
  };
}
