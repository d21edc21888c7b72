import type { Prisma, PrismaClient, User } from "@app/db";
import { AppError } from "@app/http-kit";
import { enqueueWebhook } from "../webhooks/outbox.js";
import { type AdminAct, recordAdminEvent, sessionsRevoked, userWebhookData } from "./audit.js";

/**
 * Operators' bans (better-auth's ban-user and unban-user). A ban ends every session of the user
 * at once; while it holds, every sign-in method answers 403 `banned` (sign-in/finish.ts) and
 * get-session and GET token give nothing (services/sessions.ts). A ban with an end lifts itself
 * lazily: the first sign-in or session lookup after it clears the row. JWTs issued before the
 * ban stay valid until their `exp` (JWT_EXPIRES_IN). Each ban and lift is a `user_banned`
 * security event (a lift with `detail.lifted`) and a `user.updated` webhook; the ended sessions
 * are `session.revoked` webhooks, all in the action's transaction.
 */
export class Bans {
  readonly #db: PrismaClient;
  readonly #now: () => number;

  constructor(deps: { prisma: PrismaClient; now: () => number }) {
    this.#db = deps.prisma;
    this.#now = deps.now;
  }

  /**
   * Locks the user row and deletes every session of the user: a sign-in racing the ban waits on
   * the lock (its session's foreign key check) and, once in, its session is refused on first use.
   * Each ended session is a `session.revoked` webhook.
   */
  async lockAndEnd(tx: Prisma.TransactionClient, userId: string): Promise<void> {
    await tx.$queryRaw`SELECT "id" FROM "user" WHERE "id" = ${userId} FOR UPDATE`;
    const ended = await tx.$queryRaw<{ id: string }[]>`DELETE FROM "session" WHERE "user_id" = ${userId} RETURNING "id"`;
    await sessionsRevoked(
      tx,
      userId,
      ended.map((s) => s.id),
      "user_banned",
      new Date(this.#now()),
    );
  }

  /** POST ban-user: `expiresInSeconds` from now, or until unban-user when absent. Never oneself (400). */
  async ban(act: AdminAct, userId: string, reason: string | undefined, expiresInSeconds: number | undefined): Promise<User> {
    if (userId === act.adminId) throw new AppError("bad_request", "you cannot ban yourself");
    const banExpires = expiresInSeconds === undefined ? null : new Date(this.#now() + expiresInSeconds * 1000);
    return this.#db.$transaction(async (tx) => {
      await this.lockAndEnd(tx, userId);
      const user = await tx.user.update({ where: { id: userId }, data: { banned: true, banReason: reason ?? null, banExpires } });
      await this.recordBan(tx, act, user, false);
      return user;
    });
  }

  /** POST unban-user: recorded only when there was a ban to lift. */
  async unban(act: AdminAct, userId: string): Promise<User> {
    return this.#db.$transaction(async (tx) => {
      const [before] = await tx.$queryRaw<{ banned: boolean }[]>`SELECT "banned" FROM "user" WHERE "id" = ${userId} FOR UPDATE`;
      const user = await tx.user.update({ where: { id: userId }, data: { banned: false, banReason: null, banExpires: null } });
      if (before?.banned) await this.recordBan(tx, act, user, true);
      return user;
    });
  }

  /**
   * The event and webhook of a ban (`lifted` false) or its lift, in `tx`. The event says nothing
   * of the reason or the end: the user reads it, and a banned user is told neither.
   */
  async recordBan(tx: Prisma.TransactionClient, act: AdminAct, user: User, lifted: boolean): Promise<void> {
    const now = new Date(this.#now());
    await recordAdminEvent(tx, act, { type: "user_banned", userId: user.id, detail: { lifted } }, now);
    await enqueueWebhook(tx, "user.updated", userWebhookData(user), now);
  }
}
