import { Prisma, type PrismaClient, type Session, type User } from "@app/db";
import { type RequestFacts, recordEvent } from "../security-events/record.js";
import { publicUser } from "../views/public-user.js";
import { enqueueWebhook } from "../webhooks/outbox.js";

/** A transaction, or the client itself where one write is the whole action. */
export type Db = Prisma.TransactionClient | PrismaClient;

/** Why sessions ended, as `session.revoked` webhooks name it. */
export type SessionEndReason =
  | "sign_out"
  | "revoked"
  | "password_changed"
  | "password_reset"
  | "email_verified"
  | "email_change_reverted"
  | "account_deleted"
  | "session_limit";

/**
 * The `user.created` and `user.updated` payload: the user as the public routes show it
 * (views/public-user.ts); never a secret, hash or ban reason.
 */
export function userData(user: User): Record<string, unknown> {
  return { ...publicUser(user) };
}

/** The `session.created` payload: the session's id, never its cookie secret. */
export function sessionData(session: Pick<Session, "id" | "userId" | "ipAddress" | "userAgent" | "createdAt" | "expiresAt">) {
  return {
    id: session.id,
    userId: session.userId,
    ipAddress: session.ipAddress,
    userAgent: session.userAgent,
    createdAt: session.createdAt.toISOString(),
    expiresAt: session.expiresAt.toISOString(),
  };
}

/** In the creating transaction: `sign_up` and the `user.created` webhook. */
export async function userCreated(tx: Db, user: User, method: string, facts: RequestFacts): Promise<void> {
  await recordEvent(tx, { type: "sign_up", userId: user.id, method }, facts);
  await enqueueWebhook(tx, "user.created", userData(user));
}

/** In the updating transaction: the `user.updated` webhook with the user as it is now. */
export async function userUpdated(tx: Db, user: User): Promise<void> {
  await enqueueWebhook(tx, "user.updated", userData(user));
}

/** One `session.revoked` webhook per ended session id. */
export async function sessionsRevoked(tx: Db, userId: string, ids: readonly string[], reason: SessionEndReason): Promise<void> {
  for (const id of ids) await enqueueWebhook(tx, "session.revoked", { id, userId, reason });
}

/**
 * Deletes sessions of `userId` in `tx` with one DELETE … RETURNING (all of them, all but `keep`,
 * or only `only`) and enqueues `session.revoked` for each; returns the ids ended.
 */
export async function endSessions(
  tx: Db,
  userId: string,
  reason: SessionEndReason,
  scope: { keep?: string | undefined; only?: string | undefined } = {},
): Promise<string[]> {
  const keep = scope.keep === undefined ? Prisma.empty : Prisma.sql` AND "id" <> ${scope.keep}`;
  const only = scope.only === undefined ? Prisma.empty : Prisma.sql` AND "id" = ${scope.only}`;
  const rows = await tx.$queryRaw<{ id: string }[]>`DELETE FROM "session" WHERE "user_id" = ${userId}${keep}${only} RETURNING "id"`;
  const ids = rows.map((r) => r.id);
  await sessionsRevoked(tx, userId, ids, reason);
  return ids;
}
