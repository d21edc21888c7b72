import type { Prisma, PrismaClient } from "@app/db";
import { AppError } from "@app/http-kit";
import type { MailKind } from "../services/account-mail.js";
import type { MailOutbox } from "../services/mail-outbox.js";
import { verifyPassword } from "../services/passwords.js";

const CREDENTIAL = "credential";

/** The changes of a user's second factors that mail the user (a link to their security page). */
export type SecurityNotice = Extract<MailKind, "two-factor-enabled" | "two-factor-disabled" | "backup-codes-regenerated">;

/**
 * What two-factor changes share: the password check that confirms them and the notice mail they
 * send, queued in the change's own transaction (services/mail-outbox.ts), so a change is never
 * made without its notice being queued. Without mail (no SMTP_URL) notices are skipped.
 */
export class AccountChecks {
  readonly #db: PrismaClient;
  readonly #outbox: MailOutbox;
  readonly #securityPage: string;

  constructor(deps: { prisma: PrismaClient; outbox: MailOutbox; baseUrl: string }) {
    this.#db = deps.prisma;
    this.#outbox = deps.outbox;
    this.#securityPage = `${deps.baseUrl.replace(/\/+$/, "")}/account/security`;
  }

  /**
   * 400 `invalid_password` unless `password` is the user's; a user without a password (provider
   * sign-in only) gets the same answer after the same work, as better-auth's default.
   */
  async checkPassword(userId: string, password: string): Promise<void> {
    const account = await this.#db.account.findFirst({ where: { userId, providerId: CREDENTIAL } });
    if (!(await verifyPassword(account?.passwordHash, password))) throw new AppError("invalid_password", "the password is not correct");
  }

  /** Queues the notice inside `tx`; call {@link sent} once it commits. */
  async notice(tx: Prisma.TransactionClient, kind: SecurityNotice, to: string): Promise<boolean> {
    if (!this.#outbox.enabled) return false;
    // Over the address's budget the outbox drops it (and logs so).
    return (await this.#outbox.enqueueMail({ kind, to, body: this.#securityPage }, tx)) === "queued";
  }

  /** Wakes the outbox worker after a transaction that queued a notice committed. */
  sent(queued: boolean): void {
    if (queued) this.#outbox.wake();
  }
}
