import { randomInt } from "node:crypto";
import type { PrismaClient, User } from "@app/db";
import { AppError } from "@app/http-kit";
import type { MailOutbox } from "../services/mail-outbox.js";
import { randomId, type TwoFactorSecrets } from "./secrets.js";

/** `AuthChallenge.purpose` of an emailed second-factor code. */
const PURPOSE = "two-factor-otp";
/** How long an emailed code works (what its mail says: services/account-mail.ts `two-factor-otp`). */
export const EMAIL_CODE_TTL_MS = 5 * 60 * 1000;
/** Tries one emailed code allows (better-auth's `allowedAttempts`). */
const MAX_ATTEMPTS = 5;

/**
 * Emailed second-factor codes (`auth_challenge`, purpose `two-factor-otp`): six digits sent through
 * the outbox (`two-factor-otp` mail), stored only as an HMAC bound to its row, one live code per
 * pending sign-in or session (`subject`): a new one replaces the last. A code works once, for five
 * minutes and five tries.
 */
export class EmailCodes {
  readonly #db: PrismaClient;
  readonly #secrets: TwoFactorSecrets;
  readonly #outbox: MailOutbox;
  readonly #now: () => number;

  constructor(deps: { prisma: PrismaClient; secrets: TwoFactorSecrets; outbox: MailOutbox; now: () => number }) {
    this.#db = deps.prisma;
    this.#secrets = deps.secrets;
    this.#outbox = deps.outbox;
    this.#now = deps.now;
  }

  /** True when codes can be mailed (SMTP_URL is set). */
  get available(): boolean {
    return this.#outbox.enabled;
  }

  /** Makes a code for `subject` and queues its mail to `user` (503 `mail_unavailable` without mail). */
  async send(subject: string, user: Pick<User, "id" | "email">): Promise<void> {
    if (!this.#outbox.enabled) throw new AppError("mail_unavailable", "mail is not configured (set SMTP_URL)", { expose: true });
    const code = String(randomInt(1_000_000)).padStart(6, "0");
    const id = randomId();
    const now = this.#now();
    const outcome = await this.#db.$transaction(async (tx) => {
      await tx.authChallenge.deleteMany({ where: { purpose: PURPOSE, subject } });
      await tx.authChallenge.create({
        data: {
          id,
          purpose: PURPOSE,
          subject,
          secretHash: this.#secrets.mac("email-code", `${id}:${code}`),
          userId: user.id,
          expiresAt: new Date(now + EMAIL_CODE_TTL_MS),
          createdAt: new Date(now),
        },
      });
      return this.#outbox.enqueueMail({ kind: "two-factor-otp", to: user.email, body: code }, tx);
    });
    if (outcome === "queued") this.#outbox.wake();
  }

  /**
   * Uses up the code of `subject` if `code` is it: 400 `code_expired` when there is none (never
   * sent, used, replaced or out of time), 403 `too_many_attempts` once its tries are spent,
   * 401 `invalid_code` for a wrong code (a try spent).
   */
  async verify(subject: string, code: string): Promise<void> {
    const row = await this.#db.authChallenge.findFirst({ where: { purpose: PURPOSE, subject } });
    if (!row || row.expiresAt.getTime() <= this.#now()) throw new AppError("code_expired", "the code expired: ask for a new one");
    const { count } = await this.#db.authChallenge.updateMany({
      where: { id: row.id, attempts: { lt: MAX_ATTEMPTS } },
      data: { attempts: { increment: 1 } },
    });
    if (count !== 1) {
      await this.#db.authChallenge.deleteMany({ where: { id: row.id } });
      throw new AppError("too_many_attempts", "too many wrong codes: ask for a new one");
    }
    if (!this.#secrets.matches(row.secretHash, "email-code", `${row.id}:${code}`)) throw new AppError("invalid_code", "invalid code");
    // The delete that removes the row wins the code: two requests with it succeed once.
    if ((await this.#db.authChallenge.deleteMany({ where: { id: row.id } })).count !== 1)
      throw new AppError("invalid_code", "invalid code");
  }

  /** Every emailed code of a user (two-factor turned off). */
  endAll(userId: string): Promise<{ count: number }> {
    return this.#db.authChallenge.deleteMany({ where: { purpose: PURPOSE, userId } });
  }
}
