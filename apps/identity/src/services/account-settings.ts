import {
  type ChangePasswordBody,
  type ListedSession,
  type UpdateUserBody,
  USER_DELETED_CHANNEL,
  type UserDeletedEvent,
} from "@app/contracts";
import type { PrismaClient, Session, User } from "@app/db";
import { AppError } from "@app/http-kit";
import { hashPassword, verifyPassword } from "./passwords.js";

const CREDENTIAL = "credential";

/**
 * What a signed-in user changes about their own account: password, name and image, sessions,
 * and the account itself. Every method takes the session the request proved (routes resolve it).
 */
export class AccountSettings {
  readonly #db: PrismaClient;
  readonly #now: () => number;

  constructor(deps: { prisma: PrismaClient; now?: () => number }) {
    this.#db = deps.prisma;
    this.#now = deps.now ?? Date.now;
  }

  /** 400 `invalid_password` unless `password` is the user's (the same work for a user without one). */
  async #checkPassword(userId: string, password: string): Promise<void> {
    const account = await this.#db.account.findFirst({ where: { userId, providerId: CREDENTIAL } });
    if (!(await verifyPassword(account?.passwordHash, password))) throw new AppError("invalid_password", "the password is not correct");
  }

  /** POST change-password; with `revokeOtherSessions` every other session of the user ends. */
  async changePassword(session: Session, input: ChangePasswordBody): Promise<void> {
    await this.#checkPassword(session.userId, input.currentPassword);
    const passwordHash = await hashPassword(input.newPassword);
    await this.#db.$transaction([
      this.#db.account.updateMany({ where: { userId: session.userId, providerId: CREDENTIAL }, data: { passwordHash } }),
      ...(input.revokeOtherSessions ? [this.#db.session.deleteMany({ where: { userId: session.userId, id: { not: session.id } } })] : []),
    ]);
  }

  /** POST update-user: name and/or image (`null` removes it). The email changes only by change-email. */
  updateUser(userId: string, input: UpdateUserBody): Promise<User> {
    return this.#db.user.update({
      where: { id: userId },
      data: { ...(input.name !== undefined ? { name: input.name } : {}), ...(input.image !== undefined ? { image: input.image } : {}) },
    });
  }

  /** GET list-sessions: the user's live sessions, newest first, the current one marked; never a secret. */
  async listSessions(current: Session): Promise<ListedSession[]> {
    const rows = await this.#db.session.findMany({
      where: { userId: current.userId, expiresAt: { gt: new Date(this.#now()) } },
      orderBy: [{ createdAt: "desc" }, { id: "desc" }],
      select: { id: true, userId: true, createdAt: true, updatedAt: true, expiresAt: true, ipAddress: true, userAgent: true },
    });
    return rows.map((row) => ({
      ...row,
      createdAt: row.createdAt.toISOString(),
      updatedAt: row.updatedAt.toISOString(),
      expiresAt: (row.id === current.id ? current.expiresAt : row.expiresAt).toISOString(),
      current: row.id === current.id,
    }));
  }

  /** POST revoke-session: one of the user's own sessions by id (another user's id does nothing). */
  async revokeSession(userId: string, sessionId: string): Promise<void> {
    await this.#db.session.deleteMany({ where: { userId, id: sessionId } });
  }

  /** POST revoke-other-sessions. */
  async revokeOtherSessions(current: Session): Promise<number> {
    const { count } = await this.#db.session.deleteMany({ where: { userId: current.userId, id: { not: current.id } } });
    return count;
  }

  /**
   * POST delete-user, after the password check, in one transaction: the user's sessions,
   * credentials and mailed tokens are deleted, the user row keeps only its id (email and name
   * replaced, so the address is free at once), a `user_deletion` row is written and
   * `auth_user_deleted` NOTIFYed (delivered on commit). The API deletes its rows and files and
   * sets `api_done_at`; {@link completeDeletions} then deletes the user row (docs/accounts.md).
   */
  async deleteUser(userId: string, password: string): Promise<void> {
    await this.#checkPassword(userId, password);
    await this.#db.$transaction(async (tx) => {
      await tx.userDeletion.upsert({ where: { userId }, create: { userId }, update: {} });
      await tx.session.deleteMany({ where: { userId } });
      await tx.account.deleteMany({ where: { userId } });
      await tx.verification.deleteMany({ where: { userId } });
      await tx.user.update({
        where: { id: userId },
        data: { email: `deleted-${userId}@deleted.invalid`, name: "", image: null, emailVerified: false },
      });
      await tx.$executeRaw`SELECT pg_notify(${USER_DELETED_CHANNEL}, ${JSON.stringify({ userId } satisfies UserDeletedEvent)})`;
    });
  }

  /**
   * Deletes the user rows whose deletion the API has finished (`api_done_at` set); foreign keys
   * cascade whatever the API left. Returns how many. Run by housekeeping.
   */
  async completeDeletions(): Promise<number> {
    // One cheap read on every round; the writes only when there is something to finish.
    const done = await this.#db.userDeletion.findMany({ where: { apiDoneAt: { not: null }, completedAt: null }, select: { userId: true } });
    if (!done.length) return 0;
    const ids = done.map((d) => d.userId);
    await this.#db.$transaction([
      this.#db.user.deleteMany({ where: { id: { in: ids } } }),
      this.#db.userDeletion.updateMany({ where: { userId: { in: ids } }, data: { completedAt: new Date(this.#now()) } }),
    ]);
    return ids.length;
  }
}
