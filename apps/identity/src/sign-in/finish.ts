import type { TwoFactorMethod } from "@app/contracts";
import type { Session, User } from "@app/db";
import { AppError } from "@app/http-kit";
import type { Request, Response } from "express";
import { type CookieSettings, clearSessionCookie, readSessionCookie, setSessionCookie } from "../middleware/session-cookie.js";
import { countSignIn, type RequestFacts, recordEvent, requestFacts, type SecurityEventInput } from "../security-events/record.js";
import { sessionData } from "../services/account-events.js";
import type { Sessions } from "../services/sessions.js";
import { requestMeta } from "../views/public.js";
import { enqueueWebhook } from "../webhooks/outbox.js";
import { parseCookies } from "./cookies.js";
import { type FailureFacts, recordSignInFailure, type SecondFactorKind } from "./failures.js";

/**
 * The web app's page of the second-factor step: a sign-in that ends in a redirect (a provider's
 * callback, a magic link) and needs a second factor goes there, on the callback URL's origin.
 */
export const TWO_FACTOR_PAGE = "/sign-in/two-factor";

/** How a user proved who they are (security events and the second-factor rule use it). */
export type SignInMethod = "password" | "provider" | "passkey" | "magic-link" | "email-otp";

/** How a sign-in ends. */
export interface FinishOptions {
  method: SignInMethod;
  /** false: a browser-session cookie (sign-in with `rememberMe: false`). */
  rememberMe?: boolean;
  /** The method itself proved two factors (a passkey with user verification, a verified second factor). */
  twoFactors?: boolean;
  /** The second factor that verified, when one did (the sign-in event names it). */
  secondFactor?: SecondFactorKind;
}

/** A sign-in that opened a session (its cookie is set) or waits for a second factor. */
export type Finished =
  | { kind: "session"; token: string; session: Session; user: User }
  | { kind: "two-factor"; user: User; methods: TwoFactorMethod[] };

/**
 * The second-factor step of a sign-in whose user has two-factor on (two-factor/second-factor.ts):
 * `trusted` when the request carries a valid trusted-device cookie of the user (renewed),
 * otherwise, once a pending second-factor sign-in is stored and its cookie set, the factors it
 * can finish with.
 */
export interface SecondFactorStep {
  begin(req: Request, res: Response, user: User, options: FinishOptions): Promise<"trusted" | { methods: TwoFactorMethod[] }>;
}

/**
 * The one way every sign-in method ends (password, provider, passkey, magic link, emailed code,
 * a second factor's completion): a session and its cookie, so get-session issues the contract's
 * JWT the same way whatever the method. A banned user is refused here, after the method's proof
 * and before the second factor (403 `banned`, services/sessions.ts `admit`). A user with
 * two-factor on gets no session from a one-factor method: the second-factor
 * step stores a pending sign-in (its HttpOnly cookie set, no session cookie) unless the browser
 * is a trusted device, and the sign-in finishes once a second factor verifies (two-factor/).
 * Every session it opens is written with its `sign_in` event and `session.created` webhook in one
 * transaction; a refusal here (a ban) records `sign_in_failed`, as {@link SignInFinisher.attempt}
 * does for a method's own refusals.
 */
export class SignInFinisher {
  readonly #sessions: Sessions;
  readonly #cookie: CookieSettings;
  readonly #secondFactor: SecondFactorStep | undefined;

  /** @param deps - `secondFactor`: two-factor/routes.ts `twoFactorParts(...).step` (app.ts). */
  constructor(deps: { sessions: Sessions; cookie: CookieSettings; secondFactor?: SecondFactorStep }) {
    this.#sessions = deps.sessions;
    this.#cookie = deps.cookie;
    this.#secondFactor = deps.secondFactor;
  }

  /**
   * Opens the session of `user` and sets its cookie on `res`; or, for a user with two-factor on
   * and a method that proved one factor, the second-factor step (kind `two-factor`, no session).
   * Without a second-factor step such a user is refused (503), never signed in on one factor.
   * A banned user is refused (403 `banned`); a ban whose end has passed is lifted.
   */
  async finish(req: Request, res: Response, proven: User, options: FinishOptions): Promise<Finished> {
    const facts = requestFacts(req);
    let user: User;
    try {
      user = await this.#sessions.admit(proven);
    } catch (error) {
      await this.#failed(error, { method: options.method, userId: proven.id, secondFactor: options.secondFactor }, facts);
      throw error;
    }
    let secondFactor = options.secondFactor;
    if (user.twoFactorEnabled && options.twoFactors !== true) {
      if (!this.#secondFactor) throw new AppError("service_unavailable", "second factors are not available");
      const step = await this.#secondFactor.begin(req, res, user, options);
      if (step !== "trusted") {
        // A session cookie of an earlier sign-in in this browser must not stand in for this one.
        parseCookies(req, res);
        if (readSessionCookie(req, this.#cookie) !== undefined) clearSessionCookie(res, this.#cookie);
        return { kind: "two-factor", user, methods: step.methods };
      }
      secondFactor = "trusted-device";
    }
    const event: SecurityEventInput = {
      type: "sign_in",
      userId: user.id,
      method: options.method,
      ...(secondFactor ? { detail: { secondFactor } } : {}),
    };
    const { token, session } = await this.#sessions.create(user.id, requestMeta(req), {
      within: async (tx, created) => {
        await recordEvent(tx, event, facts);
        await enqueueWebhook(tx, "session.created", sessionData(created));
      },
    });
    // Counted once the session, its event and its webhook committed: a rolled-back sign-in is none.
    countSignIn(event);
    setSessionCookie(res, this.#cookie, token, options.rememberMe === false ? undefined : session.expiresAt);
    return { kind: "session", token, session, user };
  }

  /**
   * Runs a method's proof (`prove`, which throws the method's refusal) and records
   * `sign_in_failed` when it refuses; the refusal is then thrown on unchanged.
   */
  async attempt<T>(req: Request, failure: FailureFacts, prove: () => Promise<T>): Promise<T> {
    try {
      return await prove();
    } catch (error) {
      await this.#failed(error, failure, requestFacts(req));
      throw error;
    }
  }

  /** Records a refused sign-in (a method's own check, outside {@link attempt}). */
  failed(req: Request, error: unknown, failure: FailureFacts): Promise<void> {
    return this.#failed(error, failure, requestFacts(req));
  }

  #failed(error: unknown, failure: FailureFacts, facts: RequestFacts): Promise<void> {
    return recordSignInFailure(this.#sessions.client, error, failure, facts);
  }
}
