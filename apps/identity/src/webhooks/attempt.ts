import type { PrismaClient } from "@app/db";
import type { OutboundUrlPolicy } from "@app/http-kit/outbound";
import type { Logger } from "pino";
import type { WebhookSettings } from "./config.js";
import { type AttemptQueue, type DeliveryJob, jobExpirySeconds, prismaExecutor } from "./queue.js";
import { nextAttemptAt } from "./schedule.js";
import type { WebhookSecrets } from "./secrets.js";
import { describeStatus, type SendOutcome, sendSigned } from "./send.js";

/** What became of a job: its attempt was made (or is no longer wanted), or another worker holds the delivery. */
export type AttemptResult = "done" | "held";

/** What {@link DeliveryAttempts} is built from. */
export interface DeliveryAttemptsDeps {
  prisma: PrismaClient;
  queue: AttemptQueue;
  secrets: WebhookSecrets;
  policy: OutboundUrlPolicy;
  settings: WebhookSettings;
  logger: Logger;
  now?: () => number;
}

/**
 * Makes the attempts the queue's jobs ask for. A job claims its delivery (state `sending` until
 * the claim lapses, one job expiry later) only while the row counts the job's attempt number, so
 * a job that runs twice or beside a manual retry makes no second attempt of that number. After the
 * request, the row records the attempt and, in the same transaction, the next attempt's job is
 * queued (or the delivery is succeeded or failed): a crash between the two steps loses nothing,
 * and at worst sends the attempt again (at least once, same `webhook-id`).
 */
export class DeliveryAttempts {
  readonly #deps: DeliveryAttemptsDeps;
  readonly #now: () => number;
  readonly #claimMs: number;

  constructor(deps: DeliveryAttemptsDeps) {
    this.#deps = deps;
    this.#now = deps.now ?? Date.now;
    this.#claimMs = jobExpirySeconds(deps.settings.timeoutMs) * 1000;
  }

  /** Runs one job: claim, send, record. */
  async run(job: DeliveryJob): Promise<AttemptResult> {
    const { prisma } = this.#deps;
    const now = new Date(this.#now());
    const claimed = await prisma.webhookDelivery.updateMany({
      where: { id: job.deliveryId, attempts: job.attempt, OR: [{ state: "pending" }, { state: "sending", nextAttemptAt: { lt: now } }] },
      data: { state: "sending", nextAttemptAt: new Date(now.getTime() + this.#claimMs) },
    });
    if (claimed.count === 0) {
      const row = await prisma.webhookDelivery.findUnique({ where: { id: job.deliveryId }, select: { attempts: true, state: true } });
      return row?.attempts === job.attempt && row.state === "sending" ? "held" : "done";
    }
    const delivery = await prisma.webhookDelivery.findUnique({
      where: { id: job.deliveryId },
      select: {
        endpoint: { select: { id: true, url: true, secretSealed: true } },
        message: { select: { id: true, payload: true, createdAt: true } },
      },
    });
    // The endpoint was deleted since (its deliveries went with it).
    if (!delivery) return "done";
    const { endpoint, message } = delivery;
    const secret = this.#deps.secrets.open(endpoint.id, endpoint.secretSealed);
    if (secret === undefined) {
      await this.#record(
        job,
        message.createdAt,
        {
          status: null,
          reason: "the signing secret cannot be opened (AUTH_SECRET changed): delete the endpoint and register it again",
        },
        { final: true },
      );
      return "done";
    }
    const outcome = await sendSigned(
      { url: endpoint.url, messageId: message.id, body: JSON.stringify(message.payload), secret, at: new Date(this.#now()) },
      this.#deps.policy,
      this.#deps.settings.timeoutMs,
    );
    await this.#record(job, message.createdAt, outcome);
    return "done";
  }

  /** Writes the attempt to the delivery's row and queues the next one, in one transaction. */
  async #record(job: DeliveryJob, eventAt: Date, outcome: SendOutcome, options: { final?: boolean } = {}): Promise<void> {
    const { prisma, queue, settings, logger } = this.#deps;
    const now = new Date(this.#now());
    const attempts = job.attempt + 1;
    const delivered = outcome.status !== null && outcome.status >= 200 && outcome.status < 300;
    const next = delivered || options.final ? undefined : nextAttemptAt(settings, attempts, eventAt, now);
    const state = delivered ? "succeeded" : next ? "pending" : "failed";
    const lastError = delivered ? null : outcome.status === null ? outcome.reason : describeStatus(outcome.status);
    await prisma.$transaction(async (tx) => {
      const updated = await tx.webhookDelivery.updateMany({
        where: { id: job.deliveryId, attempts: job.attempt, state: "sending" },
        data: {
          state,
          attempts,
          lastStatus: outcome.status,
          lastError,
          lastAttemptAt: now,
          nextAttemptAt: next ?? null,
          ...(delivered ? { deliveredAt: now } : {}),
        },
      });
      // Another worker took the delivery over after this claim lapsed: its record stands.
      if (updated.count === 0 || !next) return;
      await queue.add(prismaExecutor(tx), [{ deliveryId: job.deliveryId, attempt: attempts, startAfter: next }]);
    });
    if (!delivered) {
      logger.warn({ deliveryId: job.deliveryId, attempts, status: outcome.status, state }, `webhook attempt failed: ${lastError}`);
    }
  }
}
