import { AUTH_BASE_PATH, type ChangeEmailBody, type RequestPasswordResetBody, type SendVerificationEmailBody } from "@app/contracts";
import type { PrismaClient, User } from "@app/db";
import { AppError } from "@app/http-kit";
import type { Logger } from "pino";
import type { MailKind } from "./account-mail.js";
import { trustedCallback } from "./callback-url.js";
import type { MailOutbox } from "./mail-outbox.js";
import type { MailTokens, TokenPurpose } from "./mail-tokens.js";

/** Where links and callbacks may point. */
export interface LinkSettings {
  baseUrl: string;
  trustedOrigins: readonly string[];
}

/**
 * Requesting the mailed links: password reset, email verification and email change (using them
 * is services/mailed-links.ts). Each answers the same, in the same time, for known and unknown
 * addresses: the request writes the mail's token and its outbox row in one transaction, or the
 * same statements with nothing to send, and the outbox's worker sends the mail later
 * (services/mail-outbox.ts). Without SMTP_URL every address gets 503 `mail_unavailable`.
 */
export class AccountRecovery {
  readonly #db: PrismaClient;
  readonly #tokens: MailTokens;
  readonly #outbox: MailOutbox;
  readonly #links: LinkSettings;
  readonly #logger: Logger;

  constructor(deps: { prisma: PrismaClient; tokens: MailTokens; outbox: MailOutbox; links: LinkSettings; logger: Logger }) {
    this.#db = deps.prisma;
    this.#tokens = deps.tokens;
    this.#outbox = deps.outbox;
    this.#links = deps.links;
    this.#logger = deps.logger;
  }

  /** Where links and callbacks may point (the verification landing: views/link-pages.ts). */
  get linkSettings(): LinkSettings {
    return this.#links;
  }

  /** False without SMTP_URL: no mail can be sent (the mail routes answer 503). */
  get mailEnabled(): boolean {
    return this.#outbox.enabled;
  }

  /** A callback accepted by the trusted-origin rule (403 else), as an absolute URL. */
  callback(raw: string | undefined, fallback = "/"): string {
    return trustedCallback(raw, fallback, this.#links);
  }

  #api(path: string, query: Record<string, string>): string {
    // Absolute, from BASE_URL (which may carry a path prefix): the link is opened from a mail client.
    const url = new URL(`${this.#links.baseUrl.replace(/\/+$/, "")}${AUTH_BASE_PATH}${path}`);
    for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
    return url.href;
  }

  /**
   * Issues a token and queues the mail of its link in one transaction; nothing is sent when a mail
   * of this purpose went out a minute ago, when the address is over its mail budget, or without a
   * `user` (an address that gets no mail), and each of those costs the same statements.
   */
  async #mailToken(
    kind: MailKind,
    purpose: TokenPurpose,
    user: { id: string } | undefined,
    to: string,
    link: (token: string) => string,
    tokenEmail?: string,
  ) {
    if (!this.#outbox.enabled) throw new AppError("mail_unavailable", "mail is not configured (set SMTP_URL)", { expose: true });
    await this.#outbox.enqueueTokenMail({ kind, purpose, userId: user?.id, to, link, ...(tokenEmail === undefined ? {} : { tokenEmail }) });
  }

  /** POST request-password-reset: a 1-hour single-use link to a known address; nothing else. */
  async requestPasswordReset(input: RequestPasswordResetBody): Promise<void> {
    const callback = this.callback(input.redirectTo, "/reset-password");
    const user = await this.#db.user.findUnique({ where: { email: input.email } });
    await this.#mailToken("reset-password", "reset-password", user ?? undefined, input.email, (token) =>
      this.#api(`/reset-password/${token}`, { callbackURL: callback }),
    );
  }

  /** GET reset-password/:token: true while the token is valid (it is not used up here). */
  async resetTokenValid(token: string): Promise<boolean> {
    return (await this.#tokens.peek("reset-password", token)) !== undefined;
  }

  /** Sends the verification mail to an unverified known address; nothing else. */
  async sendVerificationEmail(input: SendVerificationEmailBody): Promise<void> {
    const callback = this.callback(input.callbackURL);
    const user = await this.#db.user.findUnique({ where: { email: input.email } });
    const unverified = user && !user.emailVerified ? user : undefined;
    await this.#mailToken("verify-email", "verify-email", unverified, input.email, (token) =>
      this.#api("/verify-email", { token, callbackURL: callback }),
    );
  }

  /** The verification mail of `user` (sign-up, unverified sign-in); `callback` already checked. */
  async sendVerificationTo(user: User, callback: string): Promise<void> {
    await this.#mailToken("verify-email", "verify-email", user, user.email, (token) =>
      this.#api("/verify-email", { token, callbackURL: callback }),
    );
  }

  /** Best effort: a failure to queue the mail is logged, never fails the caller (sign-up, sign-in). */
  async sendVerificationQuietly(user: User, callback: string | undefined): Promise<void> {
    if (!this.#outbox.enabled) return;
    try {
      await this.sendVerificationTo(user, this.callback(callback));
    } catch (error) {
      this.#logger.warn({ err: (error as Error).message, userId: user.id }, "verification mail not sent");
    }
  }

  /**
   * POST delete-user from a session older than DELETE_FRESH_AGE without the password: a 1-hour
   * single-use link to the account's address, whose GET deletes the account when opened where that
   * user is signed in (routes/mailed-links.ts). `callbackURL` is checked (403) and rides in the link.
   */
  async confirmDeletion(user: Pick<User, "id" | "email">, callbackURL: string | undefined): Promise<void> {
    const callback = callbackURL === undefined ? undefined : this.callback(callbackURL);
    await this.#mailToken("confirm-delete", "delete-account", user, user.email, (token) =>
      this.#api("/delete-user/callback", { token, ...(callback === undefined ? {} : { callbackURL: callback }) }),
    );
  }

  /**
   * POST change-email: a session alone never moves the account. The link goes to the current
   * address, whose owner confirms the change; only then does the new address get its own link
   * (services/mailed-links.ts), so whether the new address is taken shows nowhere here.
   */
  async changeEmail(user: User, input: ChangeEmailBody): Promise<void> {
    const callback = this.callback(input.callbackURL);
    if (input.newEmail === user.email) throw new AppError("bad_request", "the new email is the current one");
    await this.#mailToken(
      "confirm-email-change",
      "confirm-email-change",
      user,
      user.email,
      (token) => this.#api("/verify-email", { token, callbackURL: callback }),
      input.newEmail,
    );
  }
}
