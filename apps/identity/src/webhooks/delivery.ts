import type { Db } from "@app/db";
import PgBoss from "pg-boss";
import type { Logger } from "pino";
import type { IdentityConfig } from "../config.js";
import { DeliveryAttempts } from "./attempt.js";
import { Dispatcher } from "./dispatcher.js";
import { AttemptQueue, type DeliveryJob, PGBOSS_SCHEMA, WEBHOOK_QUEUE } from "./queue.js";
import { Rounds } from "./rounds.js";
import { WebhookSecrets } from "./secrets.js";
import { webhookUrlPolicy } from "./send.js";

const MINUTE = 60_000;

/** What {@link startWebhookDelivery} is built from. */
export interface WebhookDeliveryDeps {
  config: IdentityConfig;
  db: Db;
  logger: Logger;
}

/** A running webhook delivery worker. */
export interface WebhookDelivery {
  /** Stops taking new deliveries and waits for the ones in flight. */
  stop(): Promise<void>;
}

/**
 * Starts delivering the webhook outbox (main.ts, on every instance): pg-boss on identity's own
 * pool (its tables made by the migrations, so `migrate: false`), a dispatcher round every
 * WEBHOOK_POLL_INTERVAL_MS that fans new messages out into deliveries and jobs, and a fetch loop
 * that keeps up to WEBHOOK_CONCURRENCY attempts in flight. It never fails start-up: while the
 * database or the queue's tables are missing it logs and tries again.
 */
export async function startWebhookDelivery(deps: WebhookDeliveryDeps): Promise<WebhookDelivery> {
  const { config, db, logger } = deps;
  const settings = config.webhooks;
  const log = logger.child({ component: "webhooks" });
  const boss = new PgBoss({
    db: { executeSql: (text, values) => db.pool.query(text, values) },
    schema: PGBOSS_SCHEMA,
    migrate: false,
    schedule: false,
    supervise: true,
  });
  boss.on("error", (error) => log.warn({ err: error.message }, "webhook queue error"));
  const queue = new AttemptQueue({ timeoutMs: settings.timeoutMs });
  const attempts = new DeliveryAttempts({
    prisma: db.prisma,
    queue,
    secrets: new WebhookSecrets(config.authSecret),
    policy: webhookUrlPolicy(config.webhooks),
    settings,
    logger: log,
  });
  const dispatcher = new Dispatcher({ prisma: db.prisma, queue, settings });
  const rounds = new Rounds(settings.pollIntervalMs);
  const inFlight = new Set<Promise<void>>();
  let stopping = false;

  const handle = async (job: PgBoss.Job<DeliveryJob>): Promise<void> => {
    try {
      const result = await attempts.run(job.data);
      if (result === "held") await boss.fail(WEBHOOK_QUEUE, job.id, { message: "the delivery is claimed by another worker" });
      else await boss.complete(WEBHOOK_QUEUE, job.id);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      log.warn({ err: message, deliveryId: job.data.deliveryId }, "webhook attempt interrupted; the queue retries it");
      // When the database is gone this fails too; the job then expires and pg-boss retries it.
      await boss.fail(WEBHOOK_QUEUE, job.id, { message }).catch(() => undefined);
    }
  };

  /** Fetches as many due jobs as there are free slots; answers whether it may go on at once. */
  const fetchRound = async (): Promise<boolean> => {
    const free = settings.concurrency - inFlight.size;
    if (free <= 0) {
      await Promise.race(inFlight);
      return true;
    }
    const jobs = await boss.fetch<DeliveryJob>(WEBHOOK_QUEUE, { batchSize: free });
    for (const job of jobs) {
      const running = handle(job).finally(() => inFlight.delete(running));
      inFlight.add(running);
    }
    return jobs.length === free;
  };

  const started = (async () => {
    for (let wait = 1_000; !stopping; wait = Math.min(wait * 2, MINUTE)) {
      try {
        await boss.start();
        return true;
      } catch (error) {
        log.warn({ err: error instanceof Error ? error.message : String(error) }, "webhook queue not ready; trying again");
        await rounds.sleep(wait);
      }
    }
    return false;
  })();

  void started.then((ready) => {
    if (!ready) return;
    let lastRepair = 0;
    let lastSweep = 0;
    rounds.every(
      "dispatch",
      async () => {
        const now = Date.now();
        if ((await dispatcher.dispatch()) > 0) rounds.wake("fetch");
        if (now - lastRepair >= MINUTE) {
          lastRepair = now;
          await dispatcher.repair();
        }
        if (now - lastSweep >= 60 * MINUTE) {
          lastSweep = now;
          await dispatcher.sweep();
        }
      },
      (error) => log.warn({ err: error.message }, "webhook dispatch round failed"),
    );
    rounds.every("fetch", fetchRound, (error) => log.warn({ err: error.message }, "webhook fetch round failed"));
  });

  return {
    async stop() {
      stopping = true;
      await rounds.stop();
      await Promise.allSettled([...inFlight]);
      if (await started) await boss.stop({ graceful: true, wait: true, close: false, timeout: 1_000 });
    },
  };
}
