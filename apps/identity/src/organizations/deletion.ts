import { ORGANIZATION_DELETED_CHANNEL } from "@app/contracts";
import type { PrismaClient } from "@app/db";
import { clearActiveOrganization, type Tx } from "./store.js";
import { type OrganizationFacts, organizationWebhooks } from "./webhooks.js";

/** How long finished and expired invitations are kept past their expiry before housekeeping deletes them. */
export const INVITATION_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;

/**
 * Starts an organization's deletion inside `tx` (whose caller locked the organization): the
 * `organization_deletion` row, then `auth_organization_deleted` NOTIFYed with the organization's
 * id (delivered on commit). From then on the organization is gone for identity's routes and for
 * the API (the view organization_membership hides its members); its members' sessions stop
 * working in it and its pending invitations are canceled; the `organization.deleted` webhook is
 * written with it. The API deletes its rows and files and sets `api_done_at`;
 * {@link OrganizationHousekeeping.completeDeletions} then deletes the row.
 */
export async function requestOrganizationDeletion(tx: Tx, org: OrganizationFacts): Promise<void> {
  const organizationId = org.id;
  await tx.organizationDeletion.upsert({ where: { organizationId }, create: { organizationId }, update: {} });
  const members = await tx.member.findMany({ where: { organizationId }, select: { userId: true } });
  await clearActiveOrganization(
    tx,
    organizationId,
    members.map((m) => m.userId),
  );
  await tx.invitation.updateMany({ where: { organizationId, status: "pending" }, data: { status: "canceled" } });
  await tx.$executeRaw`SELECT pg_notify(${ORGANIZATION_DELETED_CHANNEL}, ${organizationId})`;
  await organizationWebhooks.deleted(tx, org);
}

/** The organizations' share of identity's housekeeping (apps/identity/src/housekeeping.ts). */
export class OrganizationHousekeeping {
  readonly #db: PrismaClient;
  readonly #now: () => number;

  constructor(deps: { prisma: PrismaClient; now: () => number }) {
    this.#db = deps.prisma;
    this.#now = deps.now;
  }

  /**
   * Deletes the organizations whose deletion the API has finished (`api_done_at` set): members,
   * invitations and teams go with them (foreign keys cascade); the outbox row keeps
   * `completed_at`. Returns how many.
   */
  async completeDeletions(): Promise<number> {
    // One cheap read on every round; the writes only when there is something to finish.
    const done = await this.#db.organizationDeletion.findMany({
      where: { apiDoneAt: { not: null }, completedAt: null },
      select: { organizationId: true },
    });
    if (!done.length) return 0;
    const ids = done.map((d) => d.organizationId);
    await this.#db.$transaction([
      this.#db.organization.deleteMany({ where: { id: { in: ids } } }),
      this.#db.organizationDeletion.updateMany({ where: { organizationId: { in: ids } }, data: { completedAt: new Date(this.#now()) } }),
    ]);
    return ids.length;
  }

  /** Deletes invitations {@link INVITATION_RETENTION_MS} past their expiry, whatever became of them; returns how many. */
  async purgeInvitations(): Promise<number> {
    const { count } = await this.#db.invitation.deleteMany({
      where: { expiresAt: { lte: new Date(this.#now() - INVITATION_RETENTION_MS) } },
    });
    return count;
  }
}
