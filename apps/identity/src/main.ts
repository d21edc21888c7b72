import { createDb } from "@app/db";
import { createLogger, serve } from "@app/http-kit";
import { createMailer } from "@app/mailer";
import { shutdownTracing } from "@app/telemetry";
import { createApp } from "./app.js";
import { loadIdentityConfig } from "./config.js";
import { startHousekeeping } from "./housekeeping.js";
import { identityMetrics } from "./metrics.js";
import { EventRetention } from "./security-events/retention.js";
import { MailOutboxWorker } from "./services/mail-outbox-worker.js";
import { startWebhookDelivery } from "./webhooks/delivery.js";

const config = loadIdentityConfig();
const logger = createLogger({ name: "identity", level: config.logLevel, format: config.logFormat });
const db = createDb(config.databaseUrl, { onPoolError: (err) => logger.warn({ err: err.message }, "database connection lost") });
const mailer = config.smtpUrl ? createMailer({ smtpUrl: config.smtpUrl, from: config.mailFrom }) : undefined;
if (!mailer) logger.warn("SMTP_URL is not set: password reset, verification and email change answer 503 mail_unavailable");
const { app, service, rateLimits, organizations, oauth, close } = createApp({ config, db, logger, ...(mailer ? { mailer } : {}) });
logger.info({ store: rateLimits.store }, "rate limits of sign-in and sign-up ready");

// Make sure a key set exists before the first get-session (and repair it if AUTH_SECRET changed).
await service.keys.view().catch((err: Error) => logger.warn({ err: err.message }, "key set not ready yet; will retry on first use"));

// Expired sessions purged, superseded keys retired, and (with KEY_ROTATION_DAYS) a new key made
// when the newest is due, on every instance; the work is idempotent and rotation is serialised.
const stopHousekeeping = startHousekeeping(service, {
  logger,
  keyRotationMs: config.keyRotationMs,
  intervalMs: config.housekeepingIntervalMs,
  organizations,
  oauth,
  events: new EventRetention({ prisma: db.prisma, retentionMs: config.operations.eventRetentionMs }),
});

// Account mails wait in the outbox (PostgreSQL) until this worker sends them; every instance runs
// one, and SKIP LOCKED hands each mail to one of them (services/mail-outbox.ts).
const mailWorker = mailer ? new MailOutboxWorker({ outbox: service.mailOutbox, mailer, logger }) : undefined;
mailWorker?.start();

// Webhook messages wait in their outbox (PostgreSQL) until a delivery worker signs and sends them
// (webhooks/delivery.ts); every instance runs one.
const webhooks = await startWebhookDelivery({ config, db, logger });

// METRICS_PORT: /metrics on a listener of its own, started and stopped with the server (metrics.ts).
const metricsPort = config.metrics.port;
const metrics =
  metricsPort === undefined
    ? undefined
    : identityMetrics({ port: metricsPort, host: config.metrics.host, pool: db.pool, keys: service.keys });

await serve(app, {
  port: config.port,
  host: config.host,
  logger,
  limits: config.limits,
  metrics,
  onShutdown: async () => {
    stopHousekeeping();
    await close();
    // The mails being sent finish first; what is still queued waits for the next start.
    await mailWorker?.stop();
    await webhooks.stop();
    mailer?.close();
    await db.close();
    // serve() exits the process next: the spans still batched are sent first (no-op when tracing is off).
    await shutdownTracing();
  },
});
