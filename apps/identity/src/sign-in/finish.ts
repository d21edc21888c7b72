import type { Session, User } from "@app/db";
import type { Request, Response } from "express";
import { type CookieSettings, setSessionCookie } from "../middleware/session-cookie.js";
import type { Sessions } from "../services/sessions.js";
import { requestMeta } from "../views/public.js";

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
  /** The method itself proved two factors (a passkey with user verification). */
  twoFactors?: boolean;
}

/** A sign-in that opened a session (its cookie is set) or waits for a second factor. */
export type Finished = { kind: "session"; token: string; session: Session; user: User } | { kind: "two-factor"; user: User };

/**
 * The one way every sign-in method ends (password, provider, passkey, magic link, emailed code):
 * a session and its cookie, so get-session issues the contract's JWT the same way whatever the
 * method.
 */
export class SignInFinisher {
  readonly #sessions: Sessions;
  readonly #cookie: CookieSettings;

  constructor(deps: { sessions: Sessions; cookie: CookieSettings }) {
    this.#sessions = deps.sessions;
    this.#cookie = deps.cookie;
  }

  /** Opens the session of `user` and sets its cookie on `res`. */
  async finish(req: Request, res: Response, user: User, options: FinishOptions): Promise<Finished> {
    const { token, session } = await this.#sessions.create(user.id, requestMeta(req));
    setSessionCookie(res, this.#cookie, token, options.rememberMe === false ? undefined : session.expiresAt);
    return { kind: "session", token, session, user };
  }
}
