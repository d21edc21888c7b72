import { AppError, aroundGuard, type Guard, guard, jsonBodyGuard, middlewareGuard } from "@app/http-kit";
import cookieParser from "cookie-parser";
import type { Request, Response } from "express";
import { passwordQueue } from "../services/password-queue.js";
import type { ActiveSession, Sessions } from "../services/sessions.js";
import { originCheck } from "./origin-check.js";
import { clientKey, type RateLimits } from "./rate-limits.js";
import { type CookieSettings, requireSession, resolveSession } from "./session-cookie.js";

/** Largest credential body; larger answers 413 before parsing. */
export const JSON_BODY_LIMIT = "16kb";

/** The OpenAPI security scheme of the session cookie (apps/identity/src/routes/openapi.ts). */
export const SESSION_COOKIE_SCHEME = "sessionCookie";

/**
 * The guards identity's routes put in order on themselves (routes/*.ts): limits per IP before
 * the body, the body, limits per account or address after it, cookies, the password queue, the
 * session, limits per user after it.
 */
export interface IdentityGuards {
  /** 403 for a state-changing browser request from an origin not on the list (middleware/origin-check.ts). */
  origin: Guard;
  /** `cache-control: no-store` on session and token answers (a route that may be cached sets its own). */
  noStore: Guard;
  /** The JSON body (415/413/400), at most {@link JSON_BODY_LIMIT}. */
  body: Guard;
  /** Parses the Cookie header (cookie-parser) for a route that reads a cookie. */
  cookies: Guard;
  /** {@link cookies} on a route that reads the session cookie when there is one (documented as its security). */
  sessionCookies: Guard;
  /** Queues the route's password work as its client's (services/password-queue.ts). */
  passwordQueue: Guard;
  /** Looks the session up ahead of a per-user limit (middleware/session-cookie.ts `resolveSession`). */
  session: Guard;
  /** 401 without a live session; the handler reads it with {@link signedInUser}. */
  signedIn: Guard;
  /**
   * After {@link signedIn}: 403 on a session an admin opened to act as the user (admin/): the
   * user's own credentials (password, email, passkeys, second factor, providers, deletion) are
   * theirs to change, never an impersonator's, who would otherwise keep a way in without `act`.
   */
  notImpersonated: Guard;
  limits: {
    signInPerIp: Guard;
    signInPerAccount: Guard;
    signUpPerIp: Guard;
    signUpPerAccount: Guard;
    mailPerIp: Guard;
    mailPerAddress: Guard;
    resetPasswordPerIp: Guard;
    passwordPerIp: Guard;
    passwordPerUser: Guard;
    /** Requests that store a challenge for a client not yet signed in (passkey sign-in options), GET included. */
    challengePerIp: Guard;
    /** Wrong second-factor codes per IP, before the body is read. */
    twoFactorPerIp: Guard;
    /** Wrong second-factor codes per (user, IP) and the user's delay, after the caller is resolved. */
    twoFactorPerUser: Guard;
    /** Dynamic client registrations of the authorization server per IP (oauth-provider/). */
    oauthRegistrationPerIp: Guard;
  };
}

/** Where {@link IdentityGuards.signedIn} keeps the request's session for its handler. */
const SIGNED_IN = "identity.signedIn";

/** The live session of a route behind {@link IdentityGuards.signedIn}. */
export function signedInUser(res: Response): ActiveSession {
  const active = res.locals[SIGNED_IN] as ActiveSession | undefined;
  if (!active) throw new Error("route reads the session without the signedIn guard");
  return active;
}

/** Builds the guards from the app's limiters, sessions and cookie settings. */
export function identityGuards(
  rateLimits: RateLimits,
  sessions: Pick<Sessions, "validate">,
  cookie: CookieSettings,
  trustedOrigins: readonly string[],
): IdentityGuards {
  // cookie-parser answers nothing and calls next() before it returns: a plain synchronous step.
  const parser = cookieParser();
  const parseCookies = (req: Request, res: Response): void => {
    parser(req, res, (error?: unknown) => {
      if (error) throw error;
    });
  };
  const limit = (name: string, handlers: Parameters<typeof middlewareGuard>[1]) => middlewareGuard(`rateLimit(${name})`, handlers);
  return {
    origin: guard("origin", originCheck(trustedOrigins)),
    noStore: guard("noStore", (_req, res) => void res.setHeader("cache-control", "no-store")),
    body: jsonBodyGuard({ limit: JSON_BODY_LIMIT }),
    cookies: guard("cookies", parseCookies),
    sessionCookies: guard("cookies", parseCookies, { security: SESSION_COOKIE_SCHEME }),
    // Password work of this request waits in the queue of its client's address.
    passwordQueue: aroundGuard("passwordQueue", (req, _res, rest) => passwordQueue.asClient(clientKey(req), rest)),
    session: guard("session", (req, res) => resolveSession(sessions, cookie, req, res)),
    signedIn: guard(
      "signedIn",
      async (req, res) => {
        res.locals[SIGNED_IN] = await requireSession(sessions, cookie, req, res);
      },
      { security: SESSION_COOKIE_SCHEME },
    ),
    notImpersonated: guard("notImpersonated", (_req, res) => {
      if (signedInUser(res).session.impersonatedBy)
        throw new AppError("forbidden", "not while acting as another user: stop impersonating first");
    }),
    limits: {
      signInPerIp: limit("signIn-ip", rateLimits.signIn.perIp),
      signInPerAccount: limit("signIn-account", rateLimits.signIn.perAccount),
      signUpPerIp: limit("signUp-ip", rateLimits.signUp.perIp),
      signUpPerAccount: limit("signUp-account", rateLimits.signUp.perAccount),
      mailPerIp: limit("mail-ip", rateLimits.mail.perIp),
      mailPerAddress: limit("mail-address", rateLimits.mail.perAddress),
      resetPasswordPerIp: limit("resetPassword-ip", rateLimits.resetPassword.perIp),
      passwordPerIp: limit("passwordCheck-ip", rateLimits.passwordChecks.perIp),
      passwordPerUser: limit("passwordCheck-user", rateLimits.passwordChecks.perUser),
      challengePerIp: limit("challenge-ip", rateLimits.challenges.perIp),
      twoFactorPerIp: limit("twoFactor-ip", rateLimits.twoFactor.perIp),
      twoFactorPerUser: limit("twoFactor-user", rateLimits.twoFactor.perUser),
      oauthRegistrationPerIp: limit("oauthRegistration-ip", rateLimits.oauthRegistration.perIp),
    },
  };
}
