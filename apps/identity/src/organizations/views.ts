import type { InvitationView, MemberView, OrganizationView, TeamMemberView, TeamView } from "@app/contracts";
import { type InvitationRow, type MemberRow, type MemberUser, type OrganizationRow, parseMetadata } from "./store.js";

// The JSON views of the organization rows, as better-auth 1.7's organization plugin answers them
// (packages/contracts/src/organizations.ts).

/**
 * An organization; `parsed` answers `metadata` as an object (create and update), else as the
 * stored JSON text (list, get-full-organization, set-active, delete), as better-auth does.
 */
export function organizationView(row: OrganizationRow, parsed = false): OrganizationView {
  const metadata = parsed ? parseMetadata(row.metadata) : row.metadata;
  return {
    id: row.id,
    name: row.name,
    slug: row.slug,
    logo: row.logo,
    ...(metadata === undefined ? {} : { metadata }),
    createdAt: row.createdAt.toISOString(),
  };
}

/** A member, with their public user fields when given. */
export function memberView(row: MemberRow & { user?: MemberUser }): MemberView {
  return {
    id: row.id,
    organizationId: row.organizationId,
    userId: row.userId,
    role: row.role,
    createdAt: row.createdAt.toISOString(),
    ...(row.user ? { user: { id: row.user.id, name: row.user.name, email: row.user.email, image: row.user.image } } : {}),
  };
}

export function invitationView(row: InvitationRow): InvitationView {
  return {
    id: row.id,
    organizationId: row.organizationId,
    email: row.email,
    role: row.role,
    status: row.status as InvitationView["status"],
    teamId: row.teamId,
    inviterId: row.inviterId,
    expiresAt: row.expiresAt.toISOString(),
    createdAt: row.createdAt.toISOString(),
  };
}

export function teamView(row: { id: string; name: string; organizationId: string; createdAt: Date; updatedAt: Date }): TeamView {
  return {
    id: row.id,
    name: row.name,
    organizationId: row.organizationId,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

export function teamMemberView(row: { id: string; teamId: string; userId: string; createdAt: Date }): TeamMemberView {
  return { id: row.id, teamId: row.teamId, userId: row.userId, createdAt: row.createdAt.toISOString() };
}
