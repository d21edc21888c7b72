import { randomUUID } from "node:crypto";
import { AUTH_BASE_PATH, type SignUpBody } from "@app/contracts";
import type { User } from "@app/db";
import type { Logger } from "pino";
import { NO_REQUEST, type RequestFacts } from "../security-events/record.js";
import type { IdentityService } from "./identity.js";

/** The fields of a user that sign-up answers with (views/public.ts `publicUser`). */
export type SignUpUser = Pick<User, "id" | "email" | "name" | "emailVerified" | "image" | "createdAt" | "updatedAt">;

/**
 * Sign-up when REQUIRE_EMAIL_VERIFICATION is on, as better-auth's sign-up/email does with
 * `requireEmailVerification`: nobody is signed in, so a new and a taken address get the same
 * answer. A new address gets its account and the verification mail; a taken one gets no account,
 * and its owner a "someone tried to create an account" mail with a password reset link. Both
 * paths hash the password and try the insert (services/accounts.ts `signUpOrFind`) and queue
 * their mail with its token through the outbox (services/mail-outbox.ts: the same statements),
 * so neither the answer nor its timing tells the two apart (docs/accounts.md).
 */
export class VerifiedSignUp {
  readonly #service: IdentityService;
  readonly #baseUrl: string;
  readonly #logger: Logger;
  readonly #now: () => number;

  constructor(deps: { service: IdentityService; baseUrl: string; logger: Logger; now?: () => number }) {
    this.#service = deps.service;
    this.#baseUrl = deps.baseUrl.replace(/\/+$/, "");
    this.#logger = deps.logger;
    this.#now = deps.now ?? Date.now;
  }

  /**
   * The user to answer with: the new account, or for a taken address a synthetic user of the same
   * shape (random id, the submitted name and email, the current time, not verified) that exists
   * nowhere, so the answer carries nothing of the real account.
   */
  async signUp(input: SignUpBody, facts: RequestFacts = NO_REQUEST): Promise<SignUpUser> {
    if (input.callbackURL !== undefined) this.#service.recovery.callback(input.callbackURL);
    const outcome = await this.#service.accounts.signUpOrFind(input, facts);
    if (outcome.created) {
      await this.#service.recovery.sendVerificationQuietly(outcome.user, input.callbackURL);
      return outcome.user;
    }
    await this.#warnOwner(outcome.user);
    const now = new Date(this.#now());
    return {
      id: randomUUID(),
      email: input.email,
      name: input.name,
      emailVerified: false,
      image: input.image ?? null,
      createdAt: now,
      updatedAt: now,
    };
  }

  /**
   * Best effort, like the verification mail: a failure to queue it is logged, never answered. The
   * reset token rides services/mail-tokens.ts, so its owner gets at most one such mail a minute,
   * however many sign-ups are tried on the address (and the outbox's budget bounds the hour).
   */
  async #warnOwner(owner: User): Promise<void> {
    const outbox = this.#service.mailOutbox;
    if (!outbox.enabled) return;
    const callback = this.#service.recovery.callback(undefined, "/reset-password");
    const link = (token: string) => {
      const url = new URL(`${this.#baseUrl}${AUTH_BASE_PATH}/reset-password/${token}`);
      url.searchParams.set("callbackURL", callback);
      return url.href;
    };
    try {
      await outbox.enqueueTokenMail({ kind: "sign-up-attempt", purpose: "reset-password", userId: owner.id, to: owner.email, link });
    } catch (error) {
      this.#logger.warn({ err: (error as Error).message, userId: owner.id }, "sign-up attempt mail not queued");
    }
  }
}
