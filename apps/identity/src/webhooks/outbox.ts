import { randomBytes } from "node:crypto";
import type { Prisma, PrismaClient } from "@app/db";

/** The webhook events identity emits (docs/operations.md#webhooks). */
export const WEBHOOK_EVENT_TYPES = [
  "user.created",
  "user.updated",
  "user.deleted",
  "session.created",
  "session.revoked",
  "organization.created",
  "organization.updated",
  "organization.deleted",
  "organization.member_added",
  "organization.member_updated",
  "organization.member_removed",
] as const;

/** One webhook event type. */
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** The Standard Webhooks `webhook-id` of a new message: `msg_` and 24 random bytes, base64url. */
export function newMessageId(): string {
  return `msg_${randomBytes(24).toString("base64url")}`;
}

/**
 * Writes one webhook message to the outbox with the client (or transaction) of the action it
 * reports, so the message exists exactly when the action committed. The payload is the Standard
 * Webhooks shape `{type, timestamp, data}`; `data` never holds a secret, token or password.
 */
export async function enqueueWebhook(
  db: Prisma.TransactionClient | PrismaClient,
  type: WebhookEventType,
  data: Record<string, unknown>,
  now: Date = new Date(),
): Promise<string> {
  const id = newMessageId();
  await db.webhookMessage.create({
    data: { id, type, payload: { type, timestamp: now.toISOString(), data } as Prisma.InputJsonValue, createdAt: now },
  });
  return id;
}
