import { z } from "zod";

const SECOND = 1000;
const HOUR = 60 * 60 * SECOND;
const DAY = 24 * HOUR;

const int = (min: number) => z.coerce.number().int().min(min);

/**
 * The webhook variables (docs/operations.md#webhooks), spread into identity's schema in
 * config.ts. Every variable needs a zod schema with a description (tools/stack/src/config-doc.ts).
 */
export const webhookSettingsShape = {
  WEBHOOK_TIMEOUT_MS: int(100)
    .max(60 * SECOND, "WEBHOOK_TIMEOUT_MS must be at most 60000")
    .default(10 * SECOND)
    .describe("deadline of one webhook request, connect to last byte; no answer by then is a failed attempt"),
  WEBHOOK_RETRY_BASE_MS: int(10)
    .default(30 * SECOND)
    .describe("wait before a failed delivery's first retry; each further retry waits twice as long (exponential backoff)"),
  WEBHOOK_RETRY_MAX_MS: int(10)
    .default(4 * HOUR)
    .describe("longest wait between two attempts of one delivery"),
  WEBHOOK_RETRY_WINDOW_MS: int(1_000)
    .default(DAY)
    .describe("how long after its event a delivery is retried; then it is failed (an admin can still retry it)"),
  WEBHOOK_POLL_INTERVAL_MS: int(500)
    .default(SECOND)
    .describe("how often each identity instance looks for new webhook events and for deliveries due"),
  WEBHOOK_CONCURRENCY: int(1)
    .max(100, "WEBHOOK_CONCURRENCY must be at most 100")
    .default(8)
    .describe("webhook requests one identity instance sends at once"),
  WEBHOOK_RETENTION_DAYS: int(2)
    .max(3650, "WEBHOOK_RETENTION_DAYS must be at most 3650")
    .default(30)
    .describe("days a webhook message and its delivery log are kept once no attempt is left"),
};

/** The parsed webhook settings, as configFrom hands them on. */
export interface WebhookSettings {
  /** One request's deadline (ms). */
  timeoutMs: number;
  /** Wait before the first retry (ms); doubling per retry up to {@link retryMaxMs}. */
  retryBaseMs: number;
  retryMaxMs: number;
  /** Retries stop this long after the event (ms). */
  retryWindowMs: number;
  /** Outbox and queue polling (ms). */
  pollIntervalMs: number;
  /** Requests in flight per instance. */
  concurrency: number;
  /** Finished messages older than this are deleted with their deliveries (ms). */
  retentionMs: number;
  /**
   * Outside production an endpoint may be `http:` and on this host's loopback (as a receiver in
   * development or a test is); in production only `https:` to public addresses.
   */
  allowLoopback: boolean;
}

/** The variables {@link webhookSettings} reads, as the schema parses them. */
interface WebhookEnv {
  WEBHOOK_TIMEOUT_MS: number;
  WEBHOOK_RETRY_BASE_MS: number;
  WEBHOOK_RETRY_MAX_MS: number;
  WEBHOOK_RETRY_WINDOW_MS: number;
  WEBHOOK_POLL_INTERVAL_MS: number;
  WEBHOOK_CONCURRENCY: number;
  WEBHOOK_RETENTION_DAYS: number;
}

/** Builds the webhook settings from the parsed environment and the runtime environment. */
export function webhookSettings(env: WebhookEnv, nodeEnv: string): WebhookSettings {
  return {
    timeoutMs: env.WEBHOOK_TIMEOUT_MS,
    retryBaseMs: env.WEBHOOK_RETRY_BASE_MS,
    retryMaxMs: Math.max(env.WEBHOOK_RETRY_MAX_MS, env.WEBHOOK_RETRY_BASE_MS),
    retryWindowMs: env.WEBHOOK_RETRY_WINDOW_MS,
    pollIntervalMs: env.WEBHOOK_POLL_INTERVAL_MS,
    concurrency: env.WEBHOOK_CONCURRENCY,
    retentionMs: env.WEBHOOK_RETENTION_DAYS * DAY,
    allowLoopback: nodeEnv !== "production",
  };
}
