import { randomUUID } from "node:crypto";
import { AUTH_BASE_PATH } from "@app/contracts";
import { isUniqueViolation, type Prisma, type PrismaClient, type User } from "@app/db";
import { AppError } from "@app/http-kit";
import { NO_REQUEST, type RequestFacts, recordEvent } from "../security-events/record.js";
import { endSessions, type SessionEndReason, userUpdated } from "./account-events.js";
import type { MailKind } from "./account-mail.js";
import type { MailOutbox } from "./mail-outbox.js";
import type { FoundToken, MailTokens, TokenPurpose } from "./mail-tokens.js";
import { hashPassword, verifyPassword } from "./passwords.js";
import { endSignInMeans } from "./sign-in-means.js";

const CREDENTIAL = "credential";

/** The links opened at GET/POST verify-email (every purpose but the reset link's). */
export const VERIFY_LINK_PURPOSES: readonly TokenPurpose[] = [
  "verify-email",
  "confirm-email-change",
  "change-email",
  "revert-email-change",
];

/** What the clicker of a verification link proved besides the mailbox. */
export interface LinkProof {
  /** The live session of the link's user that the request carries, if any. */
  sessionId?: string | undefined;
  /** The account's password, typed on the confirmation page, if any. */
  password?: string | undefined;
}

/** What using a verification link did. */
export interface VerifiedAddress {
  user: User;
  /**
   * Set when the account's password, provider links and sessions ended: a fresh reset token
   * (no mail) with which the clicker chooses a new password at once.
   */
  resetToken?: string;
  /** Set when the current address confirmed an email change: the new address, which got its link. */
  pendingEmail?: string;
}

const invalid = (message = "the link is invalid, used or expired") => new AppError("invalid_token", message);

/**
 * Using the mailed links that prove a mailbox (docs/accounts.md "When the mailbox owner proves
 * the address"). Whoever registered an address first may not own it, so once its owner proves it
 * through a reset or a first verification link, nothing the registrant held opens the account any
 * more: its password, sessions, provider links and pending links end in the transaction that
 * spends the token. Each link is checked before any password work.
 */
export class MailedLinks {
  readonly #db: PrismaClient;
  readonly #tokens: MailTokens;
  readonly #outbox: MailOutbox;
  readonly #baseUrl: string;

  constructor(deps: { prisma: PrismaClient; tokens: MailTokens; outbox: MailOutbox; baseUrl: string }) {
    this.#db = deps.prisma;
    this.#tokens = deps.tokens;
    this.#outbox = deps.outbox;
    this.#baseUrl = deps.baseUrl.replace(/\/+$/, "");
  }

  /** The valid link of `token` among `purposes`, without using it (GET verify-email decides with it). */
  find(purposes: readonly TokenPurpose[], token: string): Promise<FoundToken | undefined> {
    return this.#tokens.find(purposes, token);
  }

  /**
   * POST reset-password: the token is checked first (an invalid one costs no hashing), then one
   * transaction spends it, sets the password (creating it for a user who had none), marks the
   * address verified (the mailbox is proven) and ends every session, provider link, passkey,
   * trusted device and pending link of the user (revert links excepted: mail-tokens.ts). The
   * second factor stays: a mailbox alone never turns it off. The transaction records
   * `password_reset` (and `email_verified` when the address was not), with a `session.revoked`
   * webhook per session ended.
   */
  async resetPassword(token: string, newPassword: string, facts: RequestFacts = NO_REQUEST): Promise<void> {
    const found = await this.#tokens.find(["reset-password"], token);
    if (!found) throw invalid("the reset link is invalid, used or expired");
    const passwordHash = await hashPassword(newPassword);
    await this.#db.$transaction(async (tx) => {
      const user = await this.#spend(tx, found);
      const ended = await this.#endHoldings(
        tx,
        user.id,
        { keepSessionId: undefined, keepSignIns: false, revertLinks: false },
        "password_reset",
      );
      await tx.account.create({ data: { id: randomUUID(), userId: user.id, providerId: CREDENTIAL, accountId: user.email, passwordHash } });
      const updated = await tx.user.update({ where: { id: user.id }, data: { emailVerified: true } });
      await recordEvent(tx, { type: "password_reset", userId: user.id, method: "link", detail: { sessionsEnded: ended } }, facts);
      if (!user.emailVerified) {
        await recordEvent(tx, { type: "email_verified", userId: user.id, method: "link" }, facts);
        await userUpdated(tx, updated);
      }
    });
  }

  /**
   * A verification link (`verify-email`): marks the address verified. On an account whose address
   * was never verified, everything else ends with it in one transaction, unless the clicker
   * proves to be the account's holder too: a live session of the user (kept, the others end) or
   * its password (kept). Otherwise the password and provider links end as well and the answer
   * carries a fresh reset token. A wrong password answers 400 `invalid_password` and leaves the
   * link unused.
   */
  async verifyEmail(found: FoundToken, proof: LinkProof, facts: RequestFacts = NO_REQUEST): Promise<VerifiedAddress> {
    if (found.purpose !== "verify-email") throw invalid();
    const holder = await this.#db.user.findUnique({
      where: { id: found.userId },
      include: { accounts: { where: { providerId: CREDENTIAL }, take: 1 } },
    });
    if (!holder || holder.email !== found.email) throw invalid("the link is for an address this account no longer has");
    const keepSignIns = proof.sessionId !== undefined || (await this.#passwordProof(holder.accounts[0]?.passwordHash, proof.password));
    return this.#db.$transaction(async (tx) => {
      const user = await this.#spend(tx, found);
      if (user.emailVerified) return { user };
      const holdings = { keepSessionId: proof.sessionId, keepSignIns, revertLinks: false, endSecondFactor: true };
      await this.#endHoldings(tx, user.id, holdings, "email_verified");
      const verified = await tx.user.update({ where: { id: user.id }, data: { emailVerified: true } });
      await recordEvent(tx, { type: "email_verified", userId: user.id, method: "link", detail: { signInsEnded: !keepSignIns } }, facts);
      await userUpdated(tx, verified);
      if (keepSignIns) return { user: verified };
      return { user: verified, resetToken: await this.#freshResetToken(tx, verified) };
    });
  }

  /**
   * An email change confirmed from the current address (`confirm-email-change`, its `email` the
   * new one): the new address gets its `change-email` link in the same transaction, unless it has
   * an account by now (then nothing is sent, and the answer is the same).
   */
  async confirmEmailChange(found: FoundToken, callback: string | undefined): Promise<VerifiedAddress> {
    return this.#db.$transaction(async (tx) => {
      if (!(await this.#tokens.spend(tx, found))) throw invalid();
      const user = await tx.user.findUniqueOrThrow({ where: { id: found.userId } });
      const taken = await tx.user.findUnique({ where: { email: found.email }, select: { id: true } });
      await this.#mail(tx, "change-email", taken ? undefined : user.id, found.email, callback);
      return { user, pendingEmail: found.email };
    });
  }

  /**
   * An email-change link opened from the new address (`change-email`): moves the account to it,
   * verified, ends the user's other pending links, and tells the old address, with a link that
   * takes the change back for 7 days (`revert-email-change`). 409 `email_taken` when the address
   * got an account meanwhile.
   */
  async changeEmail(found: FoundToken, callback: string | undefined, facts: RequestFacts = NO_REQUEST): Promise<VerifiedAddress> {
    return this.#unique(() =>
      this.#db.$transaction(async (tx) => {
        if (!(await this.#tokens.spend(tx, found))) throw invalid();
        const before = await tx.user.findUniqueOrThrow({ where: { id: found.userId } });
        const user = await tx.user.update({ where: { id: before.id }, data: { email: found.email, emailVerified: true } });
        await tx.account.updateMany({ where: { userId: user.id, providerId: CREDENTIAL }, data: { accountId: found.email } });
        await this.#tokens.endPending(tx, user.id);
        await this.#mail(tx, "email-changed", user.id, before.email, callback);
        await recordEvent(tx, { type: "email_changed", userId: user.id, method: "link" }, facts);
        await userUpdated(tx, user);
        return { user };
      }),
    );
  }

  /**
   * A revert link (`revert-email-change`, its `email` the old address): the account returns to
   * that address, verified, and whoever made the change keeps nothing: every session, the
   * password, every provider link, passkey, second factor and pending link (other revert links
   * too) end, and the
   * clicker chooses a new password with the reset token of the answer.
   */
  async revertEmailChange(found: FoundToken, facts: RequestFacts = NO_REQUEST): Promise<VerifiedAddress> {
    return this.#unique(() =>
      this.#db.$transaction(async (tx) => {
        if (!(await this.#tokens.spend(tx, found))) throw invalid();
        const user = await tx.user.update({ where: { id: found.userId }, data: { email: found.email, emailVerified: true } });
        const holdings = { keepSessionId: undefined, keepSignIns: false, revertLinks: true, endSecondFactor: true };
        await this.#endHoldings(tx, user.id, holdings, "email_change_reverted");
        await recordEvent(tx, { type: "email_changed", userId: user.id, method: "link", detail: { reverted: true } }, facts);
        await userUpdated(tx, user);
        return { user, resetToken: await this.#freshResetToken(tx, user) };
      }),
    );
  }

  /**
   * Uses a link GET/POST verify-email found, by its purpose. The two steps of an email change
   * queue their next mail inside their transaction, so the worker is woken once that committed.
   */
  use(found: FoundToken, proof: LinkProof, callback: string | undefined, facts: RequestFacts = NO_REQUEST): Promise<VerifiedAddress> {
    const woken = async (done: Promise<VerifiedAddress>) => {
      const result = await done;
      this.#outbox.wake();
      return result;
    };
    switch (found.purpose) {
      case "confirm-email-change":
        return woken(this.confirmEmailChange(found, callback));
      case "change-email":
        return woken(this.changeEmail(found, callback, facts));
      case "revert-email-change":
        return this.revertEmailChange(found, facts);
      default:
        return this.verifyEmail(found, proof, facts);
    }
  }

  /** 409 `email_taken` for a change whose address another account holds by the time it is made. */
  async #unique<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (isUniqueViolation(error)) throw new AppError("email_taken", "an account with this email already exists");
      throw error;
    }
  }

  /** Queues, inside `tx`, a mail whose verify-email link carries a new token (services/mail-outbox.ts). */
  async #mail(
    tx: Prisma.TransactionClient,
    kind: "change-email" | "email-changed",
    userId: string | undefined,
    to: string,
    callback: string | undefined,
  ) {
    const purpose: TokenPurpose = kind === "change-email" ? "change-email" : "revert-email-change";
    await this.#outbox.enqueueTokenMail(
      { kind: kind satisfies MailKind, purpose, userId, to, link: (token) => this.#verifyLink(token, callback) },
      tx,
    );
  }

  #verifyLink(token: string, callback: string | undefined): string {
    const url = new URL(`${this.#baseUrl}${AUTH_BASE_PATH}/verify-email`);
    url.searchParams.set("token", token);
    if (callback) url.searchParams.set("callbackURL", callback);
    return url.href;
  }

  /** True for a correct password; undefined when none was typed; 400 `invalid_password` when wrong. */
  async #passwordProof(stored: string | null | undefined, password: string | undefined): Promise<boolean> {
    if (password === undefined) return false;
    if (!(await verifyPassword(stored, password))) throw new AppError("invalid_password", "the password is not correct");
    return true;
  }

  /** Spends the token in `tx` and returns its user, still at the address the link went to. */
  async #spend(tx: Prisma.TransactionClient, found: FoundToken): Promise<User> {
    if (!(await this.#tokens.spend(tx, found))) throw invalid();
    const user = await tx.user.findUnique({ where: { id: found.userId } });
    if (!user || user.email !== found.email) throw invalid("the link is for an address this account no longer has");
    return user;
  }

  /**
   * Ends what opens the account: every session but `keepSessionId`, every pending link (revert
   * links only with `revertLinks`), and unless `keepSignIns` the password, every provider link,
   * passkey, trusted device and pending challenge, and with `endSecondFactor` the second factor
   * too (someone else may have set it up: docs/accounts.md "Second factors"). The user row is
   * locked first, so a session or passkey another request inserts meanwhile waits on that lock
   * (its foreign key check) and cannot slip past the deletes. Each session ended gets its
   * `session.revoked` webhook (`reason`); returns how many ended.
   */
  async #endHoldings(
    tx: Prisma.TransactionClient,
    userId: string,
    keep: { keepSessionId: string | undefined; keepSignIns: boolean; revertLinks: boolean; endSecondFactor?: boolean },
    reason: SessionEndReason,
  ): Promise<number> {
    await tx.$queryRaw`SELECT "id" FROM "user" WHERE "id" = ${userId} FOR UPDATE`;
    const ended = await endSessions(tx, userId, reason, { keep: keep.keepSessionId });
    await this.#tokens.endPending(tx, userId, { revertLinks: keep.revertLinks });
    if (keep.keepSignIns) return ended.length;
    await endSignInMeans(tx, userId, { secondFactor: keep.endSecondFactor === true });
    if (keep.endSecondFactor) await tx.user.update({ where: { id: userId }, data: { twoFactorEnabled: false } });
    return ended.length;
  }

  /** A reset token for the clicker who just proved the mailbox (no mail: it goes into the redirect). */
  async #freshResetToken(tx: Prisma.TransactionClient, user: User): Promise<string> {
    const token = await this.#tokens.issue("reset-password", user.id, user.email, tx);
    if (!token) throw new Error("a reset token was refused right after the pending ones ended");
    return token;
  }
}
