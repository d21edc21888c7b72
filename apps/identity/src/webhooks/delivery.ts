import type { Db } from "@app/db";
import type { Logger } from "pino";
import type { IdentityConfig } from "../config.js";

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
 * Starts delivering the webhook outbox (main.ts, on every instance). Filled in by the webhooks'
 * work.
 */
export async function startWebhookDelivery(_deps: WebhookDeliveryDeps): Promise<WebhookDelivery> {
  return { stop: async () => {} };
}
