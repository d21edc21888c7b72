import type { Prisma, PrismaClient } from "@app/db";
import PgBoss from "pg-boss";

/** pg-boss's schema (prisma/migrations/20261127100000_webhook_delivery made its tables). */
export const PGBOSS_SCHEMA = "pgboss";
/** The queue of delivery attempts: one job per attempt. */
export const WEBHOOK_QUEUE = "webhook-delivery";

/**
 * One attempt of one delivery: the worker makes it only while the delivery row still counts
 * `attempt` attempts, so a job run twice (a crash after sending, a manual retry beside a
 * scheduled one) never makes a second attempt of the same number (webhooks/attempt.ts).
 */
export interface DeliveryJob {
  deliveryId: string;
  attempt: number;
}

/** A job to queue: its attempt and when it is due. */
export interface QueuedAttempt extends DeliveryJob {
  startAfter: Date;
}

/** Something pg-boss can run SQL on. */
export type SqlExecutor = PgBoss.Db;

/** pg-boss's SQL interface over a Prisma client or interactive transaction. */
export function prismaExecutor(db: Prisma.TransactionClient | PrismaClient): SqlExecutor {
  return {
    executeSql: async (text, values = []) => ({ rows: await db.$queryRawUnsafe<unknown[]>(text, ...values) }),
  };
}

/**
 * pg-boss's retries of a job whose worker failed it or vanished (its job expired while active):
 * the delivery's own schedule is in the rows (webhooks/schedule.ts), these only cover the worker.
 */
const JOB_RETRY = { retryLimit: 10, retryDelay: 30, retryBackoff: true } as const;

/**
 * Queues delivery attempts as pg-boss jobs in the caller's transaction, so a job exists exactly
 * when the delivery change that needs it committed. It never starts pg-boss: every insert runs
 * on the executor it is given.
 */
export class AttemptQueue {
  readonly #boss: PgBoss;
  readonly #expireInSeconds: number;

  constructor(options: { timeoutMs: number }) {
    this.#boss = new PgBoss({
      db: { executeSql: () => Promise.reject(new Error("AttemptQueue inserts on a given executor only")) },
      schema: PGBOSS_SCHEMA,
    });
    this.#expireInSeconds = jobExpirySeconds(options.timeoutMs);
  }

  /** Inserts one job per attempt on `executor` (a transaction's). */
  async add(executor: SqlExecutor, attempts: readonly QueuedAttempt[]): Promise<void> {
    if (!attempts.length) return;
    await this.#boss.insert(
      attempts.map(({ deliveryId, attempt, startAfter }) => ({
        name: WEBHOOK_QUEUE,
        data: { deliveryId, attempt } satisfies DeliveryJob,
        startAfter: startAfter.toISOString(),
        expireInSeconds: this.#expireInSeconds,
        ...JOB_RETRY,
      })),
      { db: executor },
    );
  }
}

/**
 * How long a job may stay active: the request's deadline and a margin for the database work
 * around it. A delivery's `sending` claim lasts as long (webhooks/attempt.ts), so an expired job
 * retried by pg-boss finds the claim lapsed.
 */
export function jobExpirySeconds(timeoutMs: number): number {
  return Math.ceil(timeoutMs / 1000) + 60;
}
