import { randomBytes } from "node:crypto";
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from "@app/contracts";
import type { Prisma, PrismaClient } from "@app/db";

/** The webhook events identity emits (docs/operations.md#webhooks; packages/contracts/src/webhooks.ts). */
export { WEBHOOK_EVENT_TYPES, type WebhookEventType };

/**
 * The largest message body sent: `data` comes from bounded fields (a user's image URL is the
 * longest), so only a mistake goes over, and then the event still goes out with its short fields.
 */
export const MAX_WEBHOOK_PAYLOAD_BYTES = 64 * 1024;
/** A field kept in a cut-down message is at most this long once serialised. */
const KEPT_FIELD_BYTES = 256;

/** The Standard Webhooks `webhook-id` of a new message: `msg_` and 24 random bytes, base64url. */
export function newMessageId(): string {
  return `msg_${randomBytes(24).toString("base64url")}`;
}

/**
 * `data` within {@link MAX_WEBHOOK_PAYLOAD_BYTES}: as it is, or its short top-level fields (ids,
 * names, flags) with `truncated: true`, so a receiver still learns what happened to what.
 */
export function boundedData(data: Record<string, unknown>): Record<string, unknown> {
  if (Buffer.byteLength(JSON.stringify(data)) <= MAX_WEBHOOK_PAYLOAD_BYTES) return data;
  const kept: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(data)) {
    const scalar = value === null || ["string", "number", "boolean"].includes(typeof value);
    if (scalar && Buffer.byteLength(JSON.stringify(value)) <= KEPT_FIELD_BYTES) kept[key] = value;
  }
  return { ...kept, truncated: true };
}

/**
 * Writes one webhook message to the outbox with the client (or transaction) of the action it
 * reports, so the message exists exactly when the action committed. The payload is the Standard
 * Webhooks shape `{type, timestamp, data}`; `data` never holds a secret, token or password. The
 * delivery worker (webhooks/delivery.ts) fans it out to the endpoints that subscribe to `type`.
 */
export async function enqueueWebhook(
  db: Prisma.TransactionClient | PrismaClient,
  type: WebhookEventType,
  data: Record<string, unknown>,
  now: Date = new Date(),
): Promise<string> {
  const id = newMessageId();
  const payload = { type, timestamp: now.toISOString(), data: boundedData(data) };
  await db.webhookMessage.create({ data: { id, type, payload: payload as Prisma.InputJsonValue, createdAt: now } });
  return id;
}
