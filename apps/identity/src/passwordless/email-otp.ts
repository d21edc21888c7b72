import type { EmailOtpType, SignInEmailOtpBody } from "@app/contracts";
import type { PrismaClient, User } from "@app/db";
import { AppError } from "@app/http-kit";
import type { RequestFacts } from "../security-events/record.js";
import type { MailKind } from "../services/account-mail.js";
import type { MailOutbox } from "../services/mail-outbox.js";
import { hashPassword } from "../services/passwords.js";
import { refusedFor } from "../sign-in/failures.js";
import { codePurpose, type MailChallenges } from "./challenges.js";
import type { MailboxProof } from "./mailbox-proof.js";

/** Events of this file's proofs name this method. */
const METHOD = "email-otp";

const KINDS = {
  "sign-in": "sign-in-otp",
  "email-verification": "email-verification-otp",
  "forget-password": "forget-password-otp",
} as const satisfies Record<EmailOtpType, MailKind>;

/** A valid code for an address without an account (safe to say: the caller had the code). */
const noAccount = () => new AppError("bad_request", "no account has this email address");

/**
 * Emailed codes (better-auth's `emailOTP` plugin): six digits, five minutes, three tries, stored
 * only as HMACs (challenges.ts). Asking for one answers the same for every address with the same
 * statements: a sign-in code goes to any address (its use creates the account), a verification
 * code only to an account whose address is unverified, a reset code only to an account; the
 * others write a code nobody gets and an outbox row with nothing to send.
 */
export class EmailOtps {
  readonly #db: PrismaClient;
  readonly #challenges: MailChallenges;
  readonly #proof: MailboxProof;
  readonly #outbox: MailOutbox;

  constructor(deps: { prisma: PrismaClient; challenges: MailChallenges; proof: MailboxProof; outbox: MailOutbox }) {
    this.#db = deps.prisma;
    this.#challenges = deps.challenges;
    this.#proof = deps.proof;
    this.#outbox = deps.outbox;
  }

  /** Sends a code of `type` to `email` when the address should get one (above); 503 without SMTP_URL. */
  async send(email: string, type: EmailOtpType): Promise<void> {
    if (!this.#outbox.enabled) throw new AppError("mail_unavailable", "mail is not configured (set SMTP_URL)", { expose: true });
    const user = await this.#db.user.findUnique({ where: { email }, select: { id: true, emailVerified: true } });
    const mailed = type === "sign-in" || (user !== null && (type === "forget-password" || !user.emailVerified));
    const code = this.#challenges.newCode();
    const outcome = await this.#db.$transaction(async (tx) => {
      await this.#challenges.putCode(tx, codePurpose(type), email, code, user?.id);
      return this.#outbox.enqueueMail({ kind: KINDS[type], to: email, body: mailed ? code : undefined }, tx);
    });
    if (outcome === "queued") this.#outbox.wake();
  }

  /** Checks a code without using it (its try is given back); 400 when the address has no account. */
  async check(email: string, type: EmailOtpType, otp: string): Promise<void> {
    const matched = await this.#challenges.match(codePurpose(type), email, otp);
    await this.#challenges.giveBack(matched);
    if (!(await this.#db.user.findUnique({ where: { email }, select: { id: true } }))) throw noAccount();
  }

  /**
   * Signs in with a sign-in code: one transaction spends it and takes the account, creating it
   * (verified) when there is none and proving the mailbox of one that exists (mailbox-proof.ts).
   */
  async signIn(body: SignInEmailOtpBody, facts: RequestFacts): Promise<User> {
    const matched = await this.#challenges.match(codePurpose("sign-in"), body.email, body.otp);
    const audit = { method: METHOD, facts };
    return this.#db.$transaction(async (tx) => {
      if (!(await this.#challenges.spend(tx, matched))) throw refusedFor(new AppError("invalid_code", "the code was used"), matched.userId);
      const { user } = await this.#proof.lockOrCreate(tx, body.email, { name: body.name, image: body.image }, audit);
      return this.#proof.prove(tx, user, audit);
    });
  }

  /**
   * Verifies the address with a verification code, as the verification link does: on an address
   * nobody proved, everything else that opens the account ends unless the request carries a live
   * session of the user (`sessionOf` names it), which stays with the password and providers.
   */
  async verifyEmail(
    email: string,
    otp: string,
    sessionOf: (userId: string) => Promise<string | undefined>,
    facts: RequestFacts,
  ): Promise<User> {
    const matched = await this.#challenges.match(codePurpose("email-verification"), email, otp);
    const holder = await this.#db.user.findUnique({ where: { email }, select: { id: true } });
    const keepSessionId = holder ? await sessionOf(holder.id) : undefined;
    return this.#db.$transaction(async (tx) => {
      if (!(await this.#challenges.spend(tx, matched))) throw new AppError("invalid_code", "the code was used");
      const user = await this.#proof.lock(tx, email);
      if (!user) throw noAccount();
      return this.#proof.prove(tx, user, { method: METHOD, facts }, user.id === holder?.id ? keepSessionId : undefined);
    });
  }

  /**
   * Sets a new password with a reset code: the code is checked before any hashing, then one
   * transaction spends it and resets (mailbox-proof.ts `resetPassword`: every session ends).
   */
  async resetPassword(email: string, otp: string, password: string, facts: RequestFacts): Promise<void> {
    const matched = await this.#challenges.match(codePurpose("forget-password"), email, otp);
    const passwordHash = await hashPassword(password);
    await this.#db.$transaction(async (tx) => {
      if (!(await this.#challenges.spend(tx, matched))) throw new AppError("invalid_code", "the code was used");
      const user = await this.#proof.lock(tx, email);
      if (!user) throw noAccount();
      await this.#proof.resetPassword(tx, user, passwordHash, { method: METHOD, facts });
    });
  }
}
