import { randomBytes } from "node:crypto";
import type { PrismaClient } from "@app/db";
import type { WebhookSettings } from "./config.js";
import { type AttemptQueue, jobExpirySeconds, prismaExecutor } from "./queue.js";

/** Outbox messages fanned out per transaction. */
const BATCH = 100;
const MINUTE = 60_000;

/** A delivery's id: `dlv_` and 16 random bytes, base64url. */
export function newDeliveryId(): string {
  return `dlv_${randomBytes(16).toString("base64url")}`;
}

/** What {@link Dispatcher} is built from. */
export interface DispatcherDeps {
  prisma: PrismaClient;
  queue: AttemptQueue;
  settings: WebhookSettings;
  now?: () => number;
}

/**
 * Moves the outbox into the queue, on every instance (SKIP LOCKED shares the work): each new
 * message becomes one delivery per endpoint subscribed to its type (registered before the event)
 * and one job per delivery, and is marked dispatched, all in one transaction, so a crash never
 * leaves a message half fanned out. A message no endpoint wants is deleted at once. Two slower
 * rounds keep the rest sound: {@link repair} queues again the attempts whose job was lost, and
 * {@link sweep} deletes finished messages past WEBHOOK_RETENTION_DAYS with their delivery log.
 */
export class Dispatcher {
  readonly #deps: DispatcherDeps;
  readonly #now: () => number;

  constructor(deps: DispatcherDeps) {
    this.#deps = deps;
    this.#now = deps.now ?? Date.now;
  }

  /** Fans out every message waiting; answers how many. */
  async dispatch(): Promise<number> {
    let total = 0;
    for (;;) {
      const count = await this.#dispatchBatch();
      total += count;
      if (count < BATCH) return total;
    }
  }

  async #dispatchBatch(): Promise<number> {
    const { prisma, queue } = this.#deps;
    return prisma.$transaction(async (tx) => {
      const messages = await tx.$queryRaw<{ id: string; type: string; created_at: Date }[]>`
        SELECT id, type, created_at FROM webhook_message
        WHERE dispatched_at IS NULL ORDER BY created_at LIMIT ${BATCH} FOR UPDATE SKIP LOCKED`;
      if (!messages.length) return 0;
      const endpoints = await tx.webhookEndpoint.findMany({ select: { id: true, events: true, createdAt: true } });
      const now = new Date(this.#now());
      const deliveries = messages.flatMap((message) =>
        endpoints
          .filter((endpoint) => endpoint.events.includes(message.type) && endpoint.createdAt <= message.created_at)
          .map((endpoint) => ({
            id: newDeliveryId(),
            endpointId: endpoint.id,
            messageId: message.id,
            state: "pending",
            nextAttemptAt: now,
            createdAt: now,
          })),
      );
      const wanted = new Set(deliveries.map((delivery) => delivery.messageId));
      const ids = (keep: boolean) => messages.filter((message) => wanted.has(message.id) === keep).map((message) => message.id);
      if (deliveries.length) {
        await tx.webhookDelivery.createMany({ data: deliveries });
        await queue.add(
          prismaExecutor(tx),
          deliveries.map((delivery) => ({ deliveryId: delivery.id, attempt: 0, startAfter: now })),
        );
        await tx.webhookMessage.updateMany({ where: { id: { in: ids(true) } }, data: { dispatchedAt: now } });
      }
      const unwanted = ids(false);
      if (unwanted.length) await tx.webhookMessage.deleteMany({ where: { id: { in: unwanted } } });
      return messages.length;
    });
  }

  /**
   * Queues again the attempts overdue by far more than the queue's own delays: a delivery still
   * pending long after its attempt was due, or still claimed long after its claim lapsed (its job
   * was lost with the queue's rows, or expired for good). The attempt number guards against a
   * second attempt if the old job turns up after all.
   */
  async repair(): Promise<number> {
    const { prisma, queue, settings } = this.#deps;
    const now = new Date(this.#now());
    const grace = Math.max(10 * MINUTE, 2 * jobExpirySeconds(settings.timeoutMs) * 1000);
    const overdue = new Date(now.getTime() - grace);
    return prisma.$transaction(async (tx) => {
      const rows = await tx.$queryRaw<{ id: string; attempts: number }[]>`
        SELECT id, attempts FROM webhook_delivery
        WHERE state IN ('pending', 'sending') AND next_attempt_at < ${overdue.toISOString()}::timestamptz
        ORDER BY next_attempt_at LIMIT ${BATCH} FOR UPDATE SKIP LOCKED`;
      if (!rows.length) return 0;
      await tx.webhookDelivery.updateMany({
        where: { id: { in: rows.map((row) => row.id) } },
        data: { state: "pending", nextAttemptAt: now },
      });
      await queue.add(
        prismaExecutor(tx),
        rows.map((row) => ({ deliveryId: row.id, attempt: row.attempts, startAfter: now })),
      );
      return rows.length;
    });
  }

  /** Deletes, a batch at a time, dispatched messages past retention that no attempt waits for. */
  async sweep(): Promise<number> {
    const { prisma, settings } = this.#deps;
    const before = new Date(this.#now() - settings.retentionMs);
    let total = 0;
    for (;;) {
      const count = await prisma.$executeRaw`
        DELETE FROM webhook_message WHERE id IN (
          SELECT m.id FROM webhook_message m
          WHERE m.created_at < ${before.toISOString()}::timestamptz AND m.dispatched_at IS NOT NULL
            AND NOT EXISTS (SELECT 1 FROM webhook_delivery d WHERE d.message_id = m.id AND d.state IN ('pending', 'sending'))
          LIMIT ${BATCH * 10})`;
      total += count;
      if (count < BATCH * 10) return total;
    }
  }
}
