import type { Prisma, User } from "@app/db";
import { type RequestFacts, recordEvent, type SecurityEventInput } from "../security-events/record.js";
import { publicUser } from "../views/public.js";
import { enqueueWebhook } from "../webhooks/outbox.js";

type Tx = Prisma.TransactionClient;

/** Where an admin action is recorded from: the admin, the request's facts and the app's clock. */
export interface AdminAct {
  adminId: string;
  facts: RequestFacts;
}

/**
 * Records an admin's action on `userId`'s account as a security event (actor: the admin), in the
 * action's transaction `tx`.
 */
export function recordAdminEvent(tx: Tx, act: AdminAct, event: Omit<SecurityEventInput, "actorId">, now: Date): Promise<void> {
  return recordEvent(tx, { ...event, actorId: act.adminId }, act.facts, now);
}

/** The `data` of the user.* webhooks: the user as the public routes show it (never a ban reason, a secret or a role). */
export function userWebhookData(user: User): Record<string, unknown> {
  return publicUser(user);
}

/** Why an admin's action ended sessions, as `session.revoked` says it. */
export type RevokedBecause = "admin_revoked" | "user_banned" | "impersonation_stopped";

/**
 * One `session.revoked` webhook per session an action ended, in its transaction: `{id, userId,
 * reason}` as services/account-events.ts writes the user's own (never a cookie: ids only).
 */
export async function sessionsRevoked(
  tx: Tx,
  userId: string,
  sessionIds: readonly string[],
  reason: RevokedBecause,
  now: Date,
): Promise<void> {
  for (const id of sessionIds) await enqueueWebhook(tx, "session.revoked", { id, userId, reason }, now);
}
