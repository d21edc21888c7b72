import { type Db, Prisma } from "@app/db";
import type { Logger } from "pino";
import { CoalescedPasses } from "../lib/coalesced-passes.js";
import { type PurgedTask, purgeProjects } from "./content.js";

type PrismaClient = Db["prisma"];

/** The channel identity NOTIFYs when it writes an `organization_deletion` row (payload: only a trigger). */
export const ORGANIZATION_DELETED_CHANNEL = "auth_organization_deleted";
/** The outbox identity writes (prisma/schema.prisma, model OrganizationDeletion). */
const OUTBOX = Prisma.raw("organization_deletion");
/** Most organizations read from the outbox per pass (a pass repeats until none is left). */
const BATCH = 100;

/** What an organization's deletion needs besides the database. */
export interface OrganizationDeletionDeps {
  prisma: PrismaClient;
  /** Removes upload files by id (uploads/file-store.ts). */
  store: { remove(ids: readonly string[]): Promise<void> };
  /** Announces `task.deleted` in the deleting transaction, so open streams of those tasks end. */
  announceDeleted(tx: Prisma.TransactionClient, tasks: readonly PurgedTask[]): Promise<void>;
  logger: Logger;
}

/**
 * The API's part of deleting an organization (docs/organizations.md), as account deletion's
 * (account/user-deletion.ts): identity never touches the API's tables. It inserts an
 * `organization_deletion` row, which empties `organization_membership` for the organization at
 * once (its rows answer 404 from then on), and NOTIFYs `auth_organization_deleted`. On that
 * notification, each time LISTEN comes up (start and reconnects: a notification sent while the API
 * was down is lost) and on every purge interval, every pending row (`api_done_at IS NULL`) is
 * worked off: in one transaction, the organization's projects with everything they hold and the
 * files of their attachments, then `api_done_at`; identity then deletes the organization. A row is
 * claimed with `FOR UPDATE SKIP LOCKED`, so instances share the work. A write that passed its
 * membership check just before the deletion may land after it: each pass also deletes projects of
 * organizations whose deletion is done (and what is written into a project being deleted waits
 * for it, then fails on its foreign key: organizations/content.ts).
 */
export class OrganizationDeletions {
  readonly #deps: OrganizationDeletionDeps;
  readonly #passes: CoalescedPasses;

  constructor(deps: OrganizationDeletionDeps) {
    this.#deps = deps;
    this.#passes = new CoalescedPasses(
      (reason) => this.#pass(reason),
      (reason, error) =>
        deps.logger.warn({ reason, err: (error as Error).message }, "organization deletion pass failed; the next trigger retries"),
    );
  }

  /** The event bus hooks: a notification and LISTEN coming up (start or reconnect) each start a pass. */
  get listener(): { channels: Record<string, (payload: string) => void>; onListening(): void } {
    return {
      channels: { [ORGANIZATION_DELETED_CHANNEL]: () => void this.run("notified") },
      onListening: () => void this.run("listening"),
    };
  }

  /** Works off every pending deletion; calls during a pass coalesce into one more pass. Never rejects. */
  run(reason = "start"): Promise<void> {
    return this.#passes.run(reason);
  }

  /** Stops starting passes; resolves when the one in progress ends. */
  close(): Promise<void> {
    return this.#passes.close();
  }

  async #pass(reason: string): Promise<void> {
    const { prisma, logger } = this.#deps;
    const seen = new Set<string>();
    for (;;) {
      const rows = await prisma.$queryRaw<Array<{ organization_id: string }>>`
        SELECT organization_id FROM ${OUTBOX} WHERE api_done_at IS NULL ORDER BY requested_at LIMIT ${BATCH}`;
      const fresh = rows.map((r) => r.organization_id).filter((id) => !seen.has(id));
      if (!fresh.length) break;
      for (const organizationId of fresh) {
        seen.add(organizationId);
        if (this.#passes.closed) return;
        const projects = await this.#delete(organizationId, true);
        if (projects !== undefined) logger.info({ organizationId, projects, reason }, "organization's API data deleted");
      }
    }
    // Late rows: written by a request that passed its membership check before the deletion.
    const late = await prisma.$queryRaw<Array<{ organization_id: string }>>`
      SELECT DISTINCT p.organization_id FROM project p JOIN ${OUTBOX} d ON d.organization_id = p.organization_id
      WHERE d.api_done_at IS NOT NULL LIMIT ${BATCH}`;
    for (const { organization_id: organizationId } of late) {
      if (this.#passes.closed) return;
      const projects = await this.#delete(organizationId, false);
      if (projects) logger.info({ organizationId, projects, reason }, "late rows of a deleted organization deleted");
    }
  }

  /**
   * Deletes one organization's projects and what they hold; with `claim`, only while its outbox
   * row is pending and not held by another instance, and marks it done. Resolves with the number
   * of projects deleted, or undefined when the row was not claimed.
   */
  #delete(organizationId: string, claim: boolean): Promise<number | undefined> {
    const { prisma, store, announceDeleted } = this.#deps;
    return prisma.$transaction(
      async (tx) => {
        if (claim) {
          const claimed = await tx.$queryRaw<unknown[]>`
            SELECT organization_id FROM ${OUTBOX} WHERE organization_id = ${organizationId} AND api_done_at IS NULL FOR UPDATE SKIP LOCKED`;
          if (!claimed.length) return undefined;
        }
        const projects = await tx.project.findMany({ where: { organizationId }, select: { id: true } });
        const purged = await purgeProjects(
          tx,
          projects.map((p) => p.id),
        );
        await announceDeleted(tx, purged.tasks);
        // Files before the commit: if it fails, the rows stay and the next pass deletes again, so a
        // file never outlives its row unnoticed.
        await store.remove(purged.uploads);
        if (claim) await tx.$executeRaw`UPDATE ${OUTBOX} SET api_done_at = now() WHERE organization_id = ${organizationId}`;
        return projects.length;
      },
      { timeout: 60_000, maxWait: 10_000 },
    );
  }
}
