import type { TwoFactorMethod } from "@app/contracts";
import type { Session, User } from "@app/db";
import { AppError } from "@app/http-kit";
import type { Request, Response } from "express";
import { type CookieSettings, clearSessionCookie, readSessionCookie, setSessionCookie } from "../middleware/session-cookie.js";
import type { Sessions } from "../services/sessions.js";
import { requestMeta } from "../views/public.js";
import { parseCookies } from "./cookies.js";

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
    const user = await this.#sessions.admit(proven);
    if (user.twoFactorEnabled && options.twoFactors !== true) {
      if (!this.#secondFactor) throw new AppError("service_unavailable", "second factors are not available");
      const step = await this.#secondFactor.begin(req, res, user, options);
      if (step !== "trusted") {
        // A session cookie of an earlier sign-in in this browser must not stand in for this one.
        parseCookies(req, res);
        if (readSessionCookie(req, this.#cookie) !== undefined) clearSessionCookie(res, this.#cookie);
        return { kind: "two-factor", user, methods: step.methods };
      }
    }
    const { token, session } = await this.#sessions.create(user.id, requestMeta(req));
    setSessionCookie(res, this.#cookie, token, options.rememberMe === false ? undefined : session.expiresAt);
    return { kind: "session", token, session, user };
  }
}
