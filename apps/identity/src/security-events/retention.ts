import type { PrismaClient } from "@app/db";

/** Events one delete statement removes at most: each statement holds its row locks briefly. */
export const SWEEP_BATCH = 5_000;
/** Statements one sweep runs at most; a larger backlog goes on in the next housekeeping round. */
export const SWEEP_MAX_BATCHES = 40;

/**
 * The security event log's retention (AUTH_EVENT_RETENTION_DAYS, config-operations.ts): events
 * older than `retentionMs` are deleted by the housekeeping rounds (housekeeping.ts) in batches
 * of {@link SWEEP_BATCH}, oldest first, each its own statement, so a huge backlog never holds a
 * long lock nor a long transaction, and requests that record events meanwhile are not held up.
 */
export class EventRetention {
  readonly #db: PrismaClient;
  readonly #retentionMs: number;
  readonly #now: () => number;
  readonly #batch: number;
  readonly #maxBatches: number;

  constructor(deps: { prisma: PrismaClient; retentionMs: number; now?: () => number; batch?: number; maxBatches?: number }) {
    this.#db = deps.prisma;
    this.#retentionMs = deps.retentionMs;
    this.#now = deps.now ?? Date.now;
    this.#batch = deps.batch ?? SWEEP_BATCH;
    this.#maxBatches = deps.maxBatches ?? SWEEP_MAX_BATCHES;
  }

  /** Deletes events past the retention, at most `batch × maxBatches` of them; returns how many. */
  async sweepExpired(): Promise<number> {
    const cutoff = new Date(this.#now() - this.#retentionMs);
    let total = 0;
    for (let i = 0; i < this.#maxBatches; i += 1) {
      const deleted = await this.#db.$executeRaw`
        DELETE FROM "auth_event" WHERE "id" IN (
          SELECT "id" FROM "auth_event" WHERE "created_at" < ${cutoff}
          ORDER BY "created_at" LIMIT ${this.#batch}
          FOR UPDATE SKIP LOCKED)`;
      total += deleted;
      if (deleted < this.#batch) break;
    }
    return total;
  }
}
