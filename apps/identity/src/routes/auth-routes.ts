import {
  AUTH_BASE_PATH,
  getSessionResponse,
  jwksResponse,
  SET_AUTH_JWT_HEADER,
  type SessionResponse,
  sessionResponse,
  signInBody,
  signInResponse,
  signOutResponse,
  signUpBody,
  signUpResponse,
} from "@app/contracts";
import { type AnyRoute, AppError, defineRoute } from "@app/http-kit";
import type { Request, Response } from "express";
import type { IdentityGuards } from "../middleware/guards.js";
import { type CookieSettings, clearSessionCookie, readSessionCookie, setSessionCookie } from "../middleware/session-cookie.js";
import { requestFacts } from "../security-events/record.js";
import type { IdentityService } from "../services/identity.js";
import type { VerifiedSignUp } from "../services/verified-sign-up.js";
import type { SignInFinisher } from "../sign-in/finish.js";
import { publicSession, publicUser, requestMeta } from "../views/public.js";

/** A path under the auth base path (`/api/auth`). */
const path = (name: string) => `${AUTH_BASE_PATH}${name}`;
const TAG = "session";

/**
 * The identity area's session routes under /api/auth, on better-auth's wire (plain JSON, no
 * envelope). Sign-in and sign-up set the session cookie and never carry a JWT; get-session is
 * the only response with `set-auth-jwt`. With `verifiedSignUp` (REQUIRE_EMAIL_VERIFICATION),
 * sign-up signs nobody in and answers better-auth's `{ token: null, user }` for new and taken
 * addresses alike, and counts as mail per address; without it a taken address answers 409
 * `email_taken` (docs/accounts.md). Sign-in ends through sign-in/finish.ts: a user with
 * two-factor on gets better-auth's `{ twoFactorRedirect, twoFactorMethods }` and a pending
 * second-factor cookie instead of a session (two-factor/).
 */
export function authRoutes(
  service: IdentityService,
  guards: IdentityGuards,
  cookie: CookieSettings,
  signIns: SignInFinisher,
  verifiedSignUp?: VerifiedSignUp,
): AnyRoute[] {
  const { limits } = guards;

  /** The session of the request with a fresh JWT, or undefined (its stale cookie cleared). */
  const currentSession = async (req: Request, res: Response): Promise<SessionResponse | undefined> => {
    const token = readSessionCookie(req, cookie);
    const result = await service.getSession(token);
    if (!result) {
      if (token !== undefined) clearSessionCookie(res, cookie);
      return undefined;
    }
    if (result.renewedToken) setSessionCookie(res, cookie, result.renewedToken, result.session.expiresAt);
    res.setHeader("cache-control", "no-store");
    res.setHeader(SET_AUTH_JWT_HEADER, result.jwt);
    return { session: publicSession(result.session), user: publicUser(result.user) };
  };

  return [
    defineRoute({
      method: "post",
      path: path("/sign-up/email"),
      tag: TAG,
      summary: "Create an account with email and password",
      body: signUpBody,
      response: signUpResponse,
      reply: "json",
      guards: [
        guards.origin,
        guards.noStore,
        limits.signUpPerIp,
        guards.body,
        limits.signUpPerAccount,
        ...(verifiedSignUp ? [limits.mailPerAddress] : []),
        guards.passwordQueue,
      ],
      handler: async ({ body, req, res }) => {
        if (verifiedSignUp) return { token: null, user: publicUser(await verifiedSignUp.signUp(body, requestFacts(req))) };
        const { token, session, user } = await service.signUp(body, requestMeta(req), requestFacts(req));
        setSessionCookie(res, cookie, token, session.expiresAt);
        return { session: publicSession(session), user: publicUser(user) };
      },
    }),
    defineRoute({
      method: "post",
      path: path("/sign-in/email"),
      tag: TAG,
      summary: "Sign in with email and password (the session cookie, or the pending second-factor cookie)",
      body: signInBody,
      response: signInResponse,
      reply: "json",
      guards: [
        guards.origin,
        guards.noStore,
        limits.signInPerIp,
        guards.body,
        limits.signInPerAccount,
        guards.cookies,
        guards.passwordQueue,
      ],
      handler: async ({ body, req, res }) => {
        const user = await signIns.attempt(req, { method: "password" }, () => service.checkSignIn(body));
        const finished = await signIns.finish(req, res, user, {
          method: "password",
          ...(body.rememberMe === undefined ? {} : { rememberMe: body.rememberMe }),
        });
        if (finished.kind === "two-factor") return { twoFactorRedirect: true as const, twoFactorMethods: finished.methods };
        return { session: publicSession(finished.session), user: publicUser(finished.user) };
      },
    }),
    // GET answers as better-auth does (200, null: its client reads "signed out"); POST, the
    // contract's step 2, answers 401 (packages/client and the API's cookie path rely on it).
    defineRoute({
      method: "get",
      path: path("/get-session"),
      tag: TAG,
      summary: "The session and a fresh JWT in set-auth-jwt, or null when signed out",
      response: getSessionResponse,
      reply: "json",
      guards: [guards.origin, guards.noStore, guards.sessionCookies],
      handler: async ({ req, res }) => (await currentSession(req, res)) ?? null,
    }),
    defineRoute({
      method: "post",
      path: path("/get-session"),
      tag: TAG,
      summary: "The session and a fresh JWT in set-auth-jwt; 401 when signed out",
      response: sessionResponse,
      reply: "json",
      guards: [guards.origin, guards.noStore, guards.body, guards.sessionCookies],
      handler: async ({ req, res }) => {
        const current = await currentSession(req, res);
        if (!current) throw new AppError("unauthorized", "no valid session: sign in first");
        return current;
      },
    }),
    defineRoute({
      method: "post",
      path: path("/sign-out"),
      tag: TAG,
      summary: "End the session and clear its cookie",
      response: signOutResponse,
      reply: "json",
      guards: [guards.origin, guards.noStore, guards.body, guards.sessionCookies],
      handler: async ({ req, res }) => {
        await service.signOut(readSessionCookie(req, cookie), requestFacts(req));
        clearSessionCookie(res, cookie);
        return { success: true as const };
      },
    }),
    defineRoute({
      method: "get",
      path: path("/jwks"),
      guards: [guards.origin, guards.noStore],
      tag: TAG,
      summary: "The public keys that verify identity's JWTs",
      response: jwksResponse,
      reply: "json",
      handler: async ({ res }) => {
        const keys = await service.publicKeys();
        res.setHeader("cache-control", "public, max-age=600");
        // Plain objects: the contract's JWK is open to members a future key type adds.
        return { keys: keys.map((key) => ({ ...key })) };
      },
    }),
  ];
}
