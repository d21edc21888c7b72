import type { Prisma, PrismaClient, User } from "@app/db";
import { AppError } from "@app/http-kit";

/**
 * Operators' bans (better-auth's ban-user and unban-user). A ban ends every session of the user
 * at once; while it holds, every sign-in method answers 403 `banned` (sign-in/finish.ts) and
 * get-session and GET token give nothing (services/sessions.ts). A ban with an end lifts itself
 * lazily: the first sign-in or session lookup after it clears the row. JWTs issued before the
 * ban stay valid until their `exp` (JWT_EXPIRES_IN).
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
   */
  async lockAndEnd(tx: Prisma.TransactionClient, userId: string): Promise<void> {
    await tx.$queryRaw`SELECT "id" FROM "user" WHERE "id" = ${userId} FOR UPDATE`;
    await tx.session.deleteMany({ where: { userId } });
  }

  /** POST ban-user: `expiresInSeconds` from now, or until unban-user when absent. Never oneself (400). */
  async ban(adminId: string, userId: string, reason: string | undefined, expiresInSeconds: number | undefined): Promise<User> {
    if (userId === adminId) throw new AppError("bad_request", "you cannot ban yourself");
    const banExpires = expiresInSeconds === undefined ? null : new Date(this.#now() + expiresInSeconds * 1000);
    return this.#db.$transaction(async (tx) => {
      await this.lockAndEnd(tx, userId);
      return tx.user.update({ where: { id: userId }, data: { banned: true, banReason: reason ?? null, banExpires } });
    });
  }

  /** POST unban-user. */
  unban(userId: string): Promise<User> {
    return this.#db.user.update({ where: { id: userId }, data: { banned: false, banReason: null, banExpires: null } });
  }
}
