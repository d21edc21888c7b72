import type { Prisma, PrismaClient } from "@app/db";

/** A client that reads: the app's, or a transaction's. */
export type Reader = PrismaClient | Prisma.TransactionClient;
export type Tx = Prisma.TransactionClient;

export interface OrganizationRow {
  id: string;
  name: string;
  slug: string;
  logo: string | null;
  metadata: string | null;
  createdAt: Date;
}

export interface MemberRow {
  id: string;
  organizationId: string;
  userId: string;
  role: string;
  createdAt: Date;
}

export interface MemberUser {
  id: string;
  name: string;
  email: string;
  image: string | null;
}

export interface InvitationRow {
  id: string;
  organizationId: string;
  email: string;
  role: string;
  teamId: string | null;
  status: string;
  expiresAt: Date;
  inviterId: string;
  createdAt: Date;
}

export const MEMBER_USER = { select: { id: true, name: true, email: true, image: true } } as const;

// An organization whose deletion is pending (a row in organization_deletion) is gone for every
// route: the reads below leave it out, as the view organization_membership does for the API.

/**
 * The live organization `id`, locked (FOR NO KEY UPDATE) until the transaction ends: the changes
 * that must see every member at once (roles, removals, invitations, caps, deletion) take this lock
 * first, so two of them on one organization run one after the other.
 */
export async function lockOrganization(tx: Tx, id: string): Promise<OrganizationRow | undefined> {
  const [row] = await tx.$queryRaw<OrganizationRow[]>`
    SELECT o."id", o."name", o."slug", o."logo", o."metadata", o."created_at" AS "createdAt" FROM "organization" o
    WHERE o."id" = ${id} AND NOT EXISTS (SELECT 1 FROM "organization_deletion" d WHERE d."organization_id" = o."id")
    FOR NO KEY UPDATE OF o`;
  return row;
}

/** The live organization of an id or a slug, unlocked. */
export async function findOrganization(db: Reader, by: { id: string } | { slug: string }): Promise<OrganizationRow | undefined> {
  const org = await db.organization.findUnique({
    where: by,
    select: { id: true, name: true, slug: true, logo: true, metadata: true, createdAt: true },
  });
  if (!org || (await isPendingDeletion(db, org.id))) return undefined;
  return org;
}

/** Whether the organization's deletion is pending (its row waits for the API and housekeeping). */
export async function isPendingDeletion(db: Reader, organizationId: string): Promise<boolean> {
  return (await db.organizationDeletion.count({ where: { organizationId } })) > 0;
}

/** The membership of `userId` in the live organization `organizationId`, if any. */
export async function findMember(db: Reader, userId: string, organizationId: string): Promise<MemberRow | undefined> {
  const [row] = await db.$queryRaw<MemberRow[]>`
    SELECT m."id", m."organization_id" AS "organizationId", m."user_id" AS "userId", m."role", m."created_at" AS "createdAt"
    FROM "member" m
    WHERE m."user_id" = ${userId} AND m."organization_id" = ${organizationId}
      AND NOT EXISTS (SELECT 1 FROM "organization_deletion" d WHERE d."organization_id" = m."organization_id")`;
  return row;
}

/** {@link findMember} with the member's public user fields. */
export async function findMemberWithUser(
  db: Reader,
  userId: string,
  organizationId: string,
): Promise<(MemberRow & { user: MemberUser }) | undefined> {
  const member = await findMember(db, userId, organizationId);
  if (!member) return undefined;
  const user = await db.user.findUnique({ where: { id: userId }, ...MEMBER_USER });
  return user ? { ...member, user } : undefined;
}

/** How many members of the organization hold the owner role. */
export async function countOwners(db: Reader, organizationId: string): Promise<number> {
  const [row] = await db.$queryRaw<{ n: number }[]>`
    SELECT count(*)::int AS "n" FROM "member"
    WHERE "organization_id" = ${organizationId} AND 'owner' = ANY (string_to_array(replace("role", ' ', ''), ','))`;
  return row?.n ?? 0;
}

/**
 * Ends the work of `userIds`' sessions in the organization: their active organization and team
 * are cleared where they point at it (a membership change applies at once; get-session shows it).
 */
export async function clearActiveOrganization(db: Reader, organizationId: string, userIds: string[]): Promise<void> {
  if (!userIds.length) return;
  await db.session.updateMany({
    where: { userId: { in: userIds }, activeOrganizationId: organizationId },
    data: { activeOrganizationId: null, activeTeamId: null },
  });
}

/** Deletes a member and their team memberships in the organization, and clears their sessions' work in it. */
export async function deleteMember(tx: Tx, member: MemberRow): Promise<void> {
  await tx.member.delete({ where: { id: member.id } });
  await tx.teamMember.deleteMany({ where: { userId: member.userId, team: { organizationId: member.organizationId } } });
  await clearActiveOrganization(tx, member.organizationId, [member.userId]);
}

/** Parses the stored metadata text, as better-auth's create and update answer it. */
export function parseMetadata(text: string | null): Record<string, unknown> | undefined {
  if (!text) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
