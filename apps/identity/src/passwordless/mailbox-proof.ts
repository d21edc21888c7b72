import { randomUUID } from "node:crypto";
import type { Prisma, User } from "@app/db";
import { type RequestFacts, recordEvent } from "../security-events/record.js";
import { endSessions, userCreated, userUpdated } from "../services/account-events.js";
import type { MailTokens } from "../services/mail-tokens.js";
import { endSignInMeans } from "../services/sign-in-means.js";

const CREDENTIAL = "credential";

/** How the mailbox was proven, for the events the proof records. */
export interface ProofAudit {
  /** `magic-link` or `email-otp`. */
  method: string;
  facts: RequestFacts;
}

/** The profile of an account a sign-in by mail creates. */
export interface NewUser {
  name?: string | undefined;
  image?: string | undefined;
}

/**
 * What proving a mailbox does to the account of the address (docs/accounts.md "When the mailbox
 * owner proves the address"). Each method runs in the caller's transaction, the one that spends
 * the code or link, and first locks the user row (FOR UPDATE): a session or account row inserted
 * meanwhile by another request waits on that lock (its foreign key check), so nothing the
 * registrant opens concurrently slips past the deletes.
 */
export class MailboxProof {
  readonly #tokens: MailTokens;

  constructor(deps: { tokens: MailTokens }) {
    this.#tokens = deps.tokens;
  }

  /** The account of `email`, locked for this transaction; null when there is none. */
  async lock(tx: Prisma.TransactionClient, email: string): Promise<User | null> {
    const rows = await tx.$queryRaw<{ id: string }[]>`SELECT "id" FROM "user" WHERE "email" = ${email} FOR UPDATE`;
    const id = rows[0]?.id;
    return id ? tx.user.findUnique({ where: { id } }) : null;
  }

  /**
   * The account of `email`, locked, created (verified: the mailbox is proven) when there is none,
   * as better-auth's magic link and sign-in code do. A concurrent creation of the same address
   * makes the insert do nothing, and the lock then finds that account. A new account is recorded
   * (`sign_up`, the `user.created` webhook) in the transaction.
   */
  async lockOrCreate(
    tx: Prisma.TransactionClient,
    email: string,
    profile: NewUser,
    audit: ProofAudit,
  ): Promise<{ user: User; created: boolean }> {
    const existing = await this.lock(tx, email);
    if (existing) return { user: existing, created: false };
    const id = randomUUID();
    await tx.user.createMany({
      data: [{ id, email, name: profile.name ?? "", emailVerified: true, ...(profile.image ? { image: profile.image } : {}) }],
      skipDuplicates: true,
    });
    const user = await this.lock(tx, email);
    if (!user) throw new Error("an account of the address vanished while it was created");
    const created = user.id === id;
    if (created) await userCreated(tx, user, audit.method, audit.facts);
    return { user, created };
  }

  /**
   * The mailbox of `user`'s address is proven: an address nobody proved before may have been
   * registered by someone else, so everything that opens the account ends first (every session,
   * pending link and challenge, the password, every provider link, passkey, second factor and
   * trusted device), then the address is verified. A live session of the user in the request
   * (`keepSessionId`) proves the clicker holds the account too, as for the verification link:
   * that session, the password, providers and factors stay, the other sessions end. A verified
   * address changes nothing. A proof that verifies records `email_verified`, the `user.updated`
   * webhook and a `session.revoked` webhook per session ended.
   */
  async prove(tx: Prisma.TransactionClient, user: User, audit: ProofAudit, keepSessionId?: string): Promise<User> {
    if (user.emailVerified) return user;
    const userId = user.id;
    await endSessions(tx, userId, "email_verified", { keep: keepSessionId });
    await this.#tokens.endPending(tx, userId);
    if (keepSessionId === undefined) await endSignInMeans(tx, userId, { secondFactor: true });
    const verified = await tx.user.update({
      where: { id: userId },
      data: { emailVerified: true, ...(keepSessionId === undefined ? { twoFactorEnabled: false } : {}) },
    });
    const signInsEnded = keepSessionId === undefined;
    await recordEvent(tx, { type: "email_verified", userId, method: audit.method, detail: { signInsEnded } }, audit.facts);
    await userUpdated(tx, verified);
    return verified;
  }

  /**
   * A password reset by code: the mailbox is proven ({@link prove}), the password is set (a
   * credential account is created for a user who had none, as better-auth 1.7 does), and every
   * session and pending link of the user ends, as the reset link does. Provider links of a
   * verified account stay (the code's mail says the reset signs out every device, nothing more).
   * Records `password_reset` with a `session.revoked` webhook per session ended.
   */
  async resetPassword(tx: Prisma.TransactionClient, user: User, passwordHash: string, audit: ProofAudit): Promise<User> {
    const proven = await this.prove(tx, user, audit);
    const ended = await endSessions(tx, user.id, "password_reset");
    await this.#tokens.endPending(tx, user.id);
    const { count } = await tx.account.updateMany({ where: { userId: user.id, providerId: CREDENTIAL }, data: { passwordHash } });
    if (count === 0) {
      await tx.account.create({ data: { id: randomUUID(), userId: user.id, providerId: CREDENTIAL, accountId: user.email, passwordHash } });
    }
    await recordEvent(
      tx,
      { type: "password_reset", userId: user.id, method: audit.method, detail: { sessionsEnded: ended.length } },
      audit.facts,
    );
    return proven;
  }
}
