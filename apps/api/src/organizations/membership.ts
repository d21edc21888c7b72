import type { PrismaClient } from "@app/db";
import { AppError } from "@app/http-kit";
import { notFound } from "../lib/refs.js";

/** The roles of an organization's members (identity's `member.role`), weakest first. */
export const ORGANIZATION_ROLES = ["member", "admin", "owner"] as const;
export type OrganizationRole = (typeof ORGANIZATION_ROLES)[number];

/**
 * What a request does to a row of an organization, and the weakest role that may do it: members
 * read and write content (tasks, chats, agents, messages, attachments) and read projects; admins
 * also manage a project (rename, describe, move); owners also delete it.
 */
export type Action = "read" | "write" | "manage" | "delete";
const NEEDS: Record<Action, OrganizationRole> = { read: "member", write: "member", manage: "admin", delete: "owner" };

/**
 * Where a row lives: `organizationId` of its project (an organization's row), or null with
 * `userId`, the one user who may touch it (today's owner-only rule).
 */
export interface Place {
  userId: string;
  organizationId: string | null;
}

/** One access a request needs: `action` on a row at `at`; refused as "`kind` not found" or 403. */
export interface Need {
  at: Place;
  action: Action;
  kind: string;
}

/**
 * The strongest known role in a `member.role` value. better-auth stores several roles as a comma
 * list; a role this API does not know (a custom one) counts as a plain member's.
 */
export function strongestRole(value: string): OrganizationRole {
  let rank = 0;
  for (const part of value.split(",")) rank = Math.max(rank, ORGANIZATION_ROLES.indexOf(part.trim() as OrganizationRole));
  return ORGANIZATION_ROLES[rank] ?? "member";
}

/** True when `role` may do `action`. */
export function allows(role: OrganizationRole, action: Action): boolean {
  return ORGANIZATION_ROLES.indexOf(role) >= ORGANIZATION_ROLES.indexOf(NEEDS[action]);
}

/**
 * Memberships, read whenever a decision needs them and never from the JWT: through the
 * `organization_membership` view (identity's members; none for an organization pending deletion),
 * whose rows the API may only read. A request on organizations' rows makes one indexed read of it
 * (the unique (organization_id, user_id) index of `member`), so a member removed at identity is
 * refused on their next request with the same token.
 */
export class Memberships {
  constructor(private readonly prisma: PrismaClient) {}

  /** The user's role in each of these organizations it belongs to: one read (none for no ids). */
  async rolesOf(userId: string, organizationIds: readonly string[]): Promise<Map<string, OrganizationRole>> {
    const ids = [...new Set(organizationIds)];
    if (ids.length === 0) return new Map();
    const rows = await this.prisma.organizationMembership.findMany({
      where: ids.length === 1 ? { organizationId: ids[0], userId } : { organizationId: { in: ids }, userId },
      select: { organizationId: true, role: true },
    });
    return new Map(rows.map((r) => [r.organizationId, strongestRole(r.role)]));
  }

  /**
   * Checks every need, in order, with at most one read: a row of someone else's (personal) or of
   * an organization the user is not a member of is "not found" (404, no existence leak); a member
   * whose role is too weak gets 403 `forbidden`. Resolves with the roles read.
   */
  async require(userId: string, ...needs: Need[]): Promise<Map<string, OrganizationRole>> {
    const organizations = needs.flatMap((n) => (n.at.organizationId === null ? [] : [n.at.organizationId]));
    let roles: Map<string, OrganizationRole> | undefined;
    for (const { at, action, kind } of needs) {
      if (at.organizationId === null) {
        if (at.userId !== userId) throw notFound(kind);
        continue;
      }
      roles ??= await this.rolesOf(userId, organizations);
      const role = roles.get(at.organizationId);
      if (!role) throw notFound(kind);
      if (!allows(role, action)) throw new AppError("forbidden", `${kind}: your role in its organization (${role}) may not ${action} it`);
    }
    return roles ?? new Map();
  }
}
