import {
  type ChangePasswordBody,
  type DeleteUserBody,
  type DeleteUserResponse,
  type ListedSession,
  type SessionRow,
  type UpdateSessionBody,
  type UpdateUserBody,
  USER_DELETED_CHANNEL,
  type UserDeletedEvent,
} from "@app/contracts";
import type { Prisma, PrismaClient, Session, User } from "@app/db";
import { AppError } from "@app/http-kit";
import { checkAccountDeletion, leaveOrganizationsForAccountDeletion } from "../organizations/account-deletion.js";
import { NO_REQUEST, type RequestFacts, recordEvent } from "../security-events/record.js";
import { enqueueWebhook } from "../webhooks/outbox.js";
import { endSessions, type SessionEndReason, userUpdated } from "./account-events.js";
import type { MailTokens } from "./mail-tokens.js";
import { hashPassword, verifyPassword } from "./passwords.js";
import { endSignInMeans } from "./sign-in-means.js";

const CREDENTIAL = "credential";

/** What POST delete-user checks a request without the password against, and how it confirms by mail. */
export interface DeletionProofs {
  /** A session younger than this deletes without more proof (DELETE_FRESH_AGE). */
  freshAgeMs: number;
  /** The mailed links (`delete-account`). */
  tokens: MailTokens;
  /** Mails the confirmation link (services/account-recovery.ts); undefined when no mail can be sent. */
  mail: ((user: User, callbackURL: string | undefined) => Promise<void>) | undefined;
}

/** A user's own deletion, for its `account_deleted` event. */
export interface DeletionAudit {
  facts: RequestFacts;
  /** What proved the deletion: `password`, `fresh-session`, `link` (the mailed confirmation). */
  method?: string | undefined;
}

/** The row fields a session view is built from. */
type SessionFields = Pick<Session, "id" | "userId" | "createdAt" | "updatedAt" | "expiresAt" | "ipAddress" | "userAgent">;
const SESSION_FIELDS = {
  id: true,
  userId: true,
  createdAt: true,
  updatedAt: true,
  expiresAt: true,
  ipAddress: true,
  userAgent: true,
} as const;

/** A session as the routes show it: `token` is its id, never the cookie's secret. */
function sessionRow(row: SessionFields): SessionRow {
  return {
    ...row,
    token: row.id,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    expiresAt: row.expiresAt.toISOString(),
  };
}

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

  /** Whether the user has a password (a credential account with a hash). */
  async #hasPassword(userId: string): Promise<boolean> {
    const account = await this.#db.account.findFirst({ where: { userId, providerId: CREDENTIAL }, select: { passwordHash: true } });
    return Boolean(account?.passwordHash);
  }

  /**
   * POST change-password; with `revokeOtherSessions` every other session of the user ends. The
   * change, its `password_changed` event and the ended sessions' webhooks share a transaction.
   */
  async changePassword(session: Session, input: ChangePasswordBody, facts: RequestFacts = NO_REQUEST): Promise<void> {
    await this.#checkPassword(session.userId, input.currentPassword);
    const passwordHash = await hashPassword(input.newPassword);
    await this.#db.$transaction(async (tx) => {
      await tx.account.updateMany({ where: { userId: session.userId, providerId: CREDENTIAL }, data: { passwordHash } });
      const ended = input.revokeOtherSessions ? await endSessions(tx, session.userId, "password_changed", { keep: session.id }) : [];
      await recordEvent(
        tx,
        { type: "password_changed", userId: session.userId, ...(ended.length ? { detail: { sessionsEnded: ended.length } } : {}) },
        facts,
      );
    });
  }

  /**
   * POST update-user: name and/or image (`null` removes it), with the `user.updated` webhook. The
   * email changes only by change-email.
   */
  updateUser(userId: string, input: UpdateUserBody): Promise<User> {
    return this.#db.$transaction(async (tx) => {
      const user = await tx.user.update({
        where: { id: userId },
        data: { ...(input.name !== undefined ? { name: input.name } : {}), ...(input.image !== undefined ? { image: input.image } : {}) },
      });
      await userUpdated(tx, user);
      return user;
    });
  }

  /** GET list-sessions: the user's live sessions, newest first, the current one marked; never a secret. */
  async listSessions(current: Session): Promise<ListedSession[]> {
    const rows = await this.#db.session.findMany({
      // An admin's impersonation sessions are not the user's to see or end (as better-auth's admin plugin).
      where: {
        userId: current.userId,
        expiresAt: { gt: new Date(this.#now()) },
        OR: [{ impersonatedBy: null }, { id: current.id }],
      },
      orderBy: [{ createdAt: "desc" }, { id: "desc" }],
      select: SESSION_FIELDS,
    });
    return rows.map((row) => ({
      ...sessionRow(row.id === current.id ? { ...row, expiresAt: current.expiresAt } : row),
      current: row.id === current.id,
    }));
  }

  /**
   * Ends sessions of `userId` with one `session_revoked` event (how many ended) and a
   * `session.revoked` webhook per session; nothing is recorded when none ended.
   */
  async #revoke(userId: string, scope: { keep?: string; only?: string }, facts: RequestFacts, reason: SessionEndReason = "revoked") {
    return this.#db.$transaction(async (tx) => {
      const ended = await endSessions(tx, userId, reason, scope);
      if (ended.length) await recordEvent(tx, { type: "session_revoked", userId, detail: { count: ended.length } }, facts);
      return ended.length;
    });
  }

  /** POST revoke-session: one of the user's own sessions by id (another user's id does nothing). */
  async revokeSession(userId: string, sessionId: string, facts: RequestFacts = NO_REQUEST): Promise<void> {
    await this.#revoke(userId, { only: sessionId }, facts);
  }

  /** POST revoke-other-sessions. */
  revokeOtherSessions(current: Session, facts: RequestFacts = NO_REQUEST): Promise<number> {
    return this.#revoke(current.userId, { keep: current.id }, facts);
  }

  /** POST revoke-sessions: every session of the user, the request's own included. */
  revokeSessions(userId: string, facts: RequestFacts = NO_REQUEST): Promise<number> {
    return this.#revoke(userId, {}, facts);
  }

  /**
   * POST update-session: sets the fields of the request's session; 401 `unauthorized` when it
   * ended meanwhile (the route clears its cookie), as better-auth.
   */
  async updateSession(current: Session, input: UpdateSessionBody): Promise<SessionRow> {
    const { count } = await this.#db.session.updateMany({
      where: { id: current.id, userId: current.userId, expiresAt: { gt: new Date(this.#now()) } },
      data: input.userAgent === undefined ? {} : { userAgent: input.userAgent },
    });
    const row = count === 1 ? await this.#db.session.findUnique({ where: { id: current.id }, select: SESSION_FIELDS }) : null;
    if (!row) throw new AppError("unauthorized", "no valid session: sign in first");
    return sessionRow(row);
  }

  /**
   * POST delete-user, as better-auth's `deleteUser` with `sendDeleteAccountVerification`: a given
   * `password` must be the account's (400 `invalid_password`, and a user without one has none to
   * give); a `token` (the mailed link's) deletes at once; without either, a session younger than
   * DELETE_FRESH_AGE deletes an account that has no password at once, and any other request gets
   * the confirmation link mailed, or 403 `session_not_fresh` when no mail can be sent. A stolen
   * cookie alone never deletes an account that has a password (docs/accounts.md). A given
   * password deletes at once, whatever the session's age.
   */
  async deleteUser(
    active: { session: Session; user: User },
    input: DeleteUserBody,
    proofs: DeletionProofs,
    facts: RequestFacts = NO_REQUEST,
  ): Promise<DeleteUserResponse> {
    const { session, user } = active;
    if (input.password !== undefined) await this.#checkPassword(user.id, input.password);
    // An organization with other members keeps an owner: its last owner hands it on first (409).
    await checkAccountDeletion(this.#db, user.id);
    if (input.token !== undefined) {
      await this.deleteWithLink(user.id, input.token, proofs.tokens, facts);
      return { success: true, message: "User deleted" };
    }
    const fresh = this.#now() - session.createdAt.getTime() < proofs.freshAgeMs;
    if (input.password === undefined && (!fresh || (await this.#hasPassword(user.id)))) {
      if (!proofs.mail) throw new AppError("session_not_fresh", "sign in again, or give the password, to delete the account");
      await proofs.mail(user, input.callbackURL);
      return { success: true, message: "Verification email sent" };
    }
    await this.deleteAccount(user.id, undefined, { facts, method: input.password === undefined ? "fresh-session" : "password" });
    return { success: true, message: "User deleted" };
  }

  /**
   * The mailed confirmation (POST delete-user's `token`, GET delete-user/callback): deletes the
   * account of `userId` when `token` is its live `delete-account` link, spent in the deletion's
   * transaction (of two concurrent uses one deletes); 400 `invalid_token` else.
   */
  async deleteWithLink(userId: string, token: string, tokens: MailTokens, facts: RequestFacts = NO_REQUEST): Promise<void> {
    const invalid = () => new AppError("invalid_token", "the link is invalid, used or expired");
    const found = await tokens.find(["delete-account"], token);
    if (!found || found.userId !== userId) throw invalid();
    await this.deleteAccount(
      userId,
      async (tx) => {
        if (!(await tokens.spend(tx, found))) throw invalid();
      },
      { facts, method: "link" },
    );
  }

  /**
   * The deletion, in one transaction (after `first`, which may refuse by throwing): the user's
   * sessions, credentials and mailed tokens are deleted, the user row keeps only its id (email and
   * name replaced, so the address is free at once), a `user_deletion` row is written and
   * `auth_user_deleted` NOTIFYed (delivered on commit). The API deletes its rows and files and
   * sets `api_done_at`; {@link completeDeletions} then deletes the user row (docs/accounts.md).
   * An admin's remove-user (admin/users.ts) is the same deletion. Every session ended gets its
   * `session.revoked` webhook; with `audit` (the user's own deletion) the transaction also
   * records `account_deleted` and the `user.deleted` webhook, which remove-user writes itself
   * with its admin as the actor.
   */
  async deleteAccount(userId: string, first?: (tx: Prisma.TransactionClient) => Promise<void>, audit?: DeletionAudit): Promise<void> {
    await this.#db.$transaction(async (tx) => {
      await first?.(tx);
      await leaveOrganizationsForAccountDeletion(tx, userId);
      await tx.userDeletion.upsert({ where: { userId }, create: { userId }, update: {} });
      await endSessions(tx, userId, "account_deleted");
      await tx.verification.deleteMany({ where: { userId } });
      // Every other way in ends with the account, before the row itself goes (housekeeping).
      await endSignInMeans(tx, userId, { secondFactor: true });
      // The apps the user authorized: their grants, codes and refresh tokens end with the account.
      await tx.oAuthPayload.deleteMany({ where: { accountId: userId } });
      await tx.user.update({
        where: { id: userId },
        data: { email: `deleted-${userId}@deleted.invalid`, name: "", image: null, emailVerified: false, twoFactorEnabled: false },
      });
      if (audit) {
        await recordEvent(tx, { type: "account_deleted", userId, ...(audit.method ? { method: audit.method } : {}) }, audit.facts);
        await enqueueWebhook(tx, "user.deleted", { id: userId });
      }
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
