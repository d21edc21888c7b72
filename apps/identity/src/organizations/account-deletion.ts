import { AppError } from "@app/http-kit";
import { requestOrganizationDeletion } from "./deletion.js";
import { isOwner } from "./roles.js";
import { countOwners, lockOrganization, type Reader, type Tx } from "./store.js";
import { organizationWebhooks } from "./webhooks.js";

/** The live organizations `userId` owns, each with how many other members and other owners it has. */
async function ownedOrganizations(db: Reader, userId: string) {
  const memberships = await db.$queryRaw<{ organizationId: string; name: string; role: string; members: number }[]>`
    SELECT m."organization_id" AS "organizationId", o."name", m."role",
      (SELECT count(*)::int FROM "member" x WHERE x."organization_id" = m."organization_id") AS "members"
    FROM "member" m JOIN "organization" o ON o."id" = m."organization_id"
    WHERE m."user_id" = ${userId}
      AND NOT EXISTS (SELECT 1 FROM "organization_deletion" d WHERE d."organization_id" = m."organization_id")
    ORDER BY m."organization_id"`;
  return memberships.filter((m) => isOwner(m.role));
}

/** 409 `conflict`, naming the organization that would be left without an owner. */
function soleOwner(name: string): AppError {
  return new AppError(
    "conflict",
    `you are the only owner of the organization "${name}", which has other members: make one of them an owner, or delete the organization, before deleting your account`,
  );
}

/**
 * Refuses (409 `conflict`) to delete the account of a user who is the only owner of an
 * organization that has other members: the organization would be left without an owner. Reads
 * only; delete-user calls it before it mails a confirmation link, so that the link is not sent
 * for a deletion that would be refused.
 */
export async function checkAccountDeletion(db: Reader, userId: string): Promise<void> {
  for (const org of await ownedOrganizations(db, userId)) {
    if (org.members > 1 && (await countOwners(db, org.organizationId)) <= 1) throw soleOwner(org.name);
  }
}

/**
 * The organizations' part of deleting the account `userId`, inside the deletion's transaction
 * `tx` (services/account-settings.ts): each organization the user owns is locked and checked
 * again ({@link checkAccountDeletion}, so a concurrent role change cannot slip between); an
 * organization whose only member is the user is deleted with the account (the outbox and its
 * NOTIFY, organizations/deletion.ts); then the user's memberships and team memberships end and
 * they leave every organization at once, before the user row itself goes: an
 * `organization.member_removed` webhook for each organization that stays.
 */
export async function leaveOrganizationsForAccountDeletion(tx: Tx, userId: string): Promise<void> {
  for (const owned of await ownedOrganizations(tx, userId)) {
    // Locked in id order (the query's), as every other path locks one organization: no deadlock.
    const org = await lockOrganization(tx, owned.organizationId);
    if (!org) continue;
    const members = await tx.member.count({ where: { organizationId: owned.organizationId } });
    if (members <= 1) await requestOrganizationDeletion(tx, org);
    else if ((await countOwners(tx, owned.organizationId)) <= 1) throw soleOwner(owned.name);
  }
  // The organizations that stay (one being deleted just now reads as gone already).
  const staying = await tx.$queryRaw<{ id: string; userId: string; role: string; orgId: string; name: string; slug: string }[]>`
    SELECT m."id", m."user_id" AS "userId", m."role", o."id" AS "orgId", o."name", o."slug"
    FROM "member" m JOIN "organization" o ON o."id" = m."organization_id"
    WHERE m."user_id" = ${userId}
      AND NOT EXISTS (SELECT 1 FROM "organization_deletion" d WHERE d."organization_id" = m."organization_id")
    ORDER BY o."id"`;
  for (const m of staying) await organizationWebhooks.memberRemoved(tx, { id: m.orgId, name: m.name, slug: m.slug }, m, "account_deleted");
  await tx.teamMember.deleteMany({ where: { userId } });
  await tx.member.deleteMany({ where: { userId } });
}
