import {
  AUTH_BASE_PATH,
  linkedAccountsResponse,
  linkSocialBody,
  signInSocialBody,
  signInSocialResponse,
  socialProvidersResponse,
  statusResponse,
  unlinkAccountBody,
} from "@app/contracts";
import { type AnyRoute, AppError, defineRoute } from "@app/http-kit";
import type { CookieOptions } from "express";
import { z } from "zod";
import { type IdentityGuards, signedInUser } from "../middleware/guards.js";
import type { CookieSettings } from "../middleware/session-cookie.js";
import { requestFacts } from "../security-events/record.js";
import { FLOW_TTL_SECONDS } from "../services/oidc/flow-state.js";
import type { Social } from "../services/oidc/index.js";
import { SocialCallbackError } from "../services/oidc/social-sign-in.js";
import { type SignInFinisher, TWO_FACTOR_PAGE } from "../sign-in/finish.js";

/** The flow cookie is sent only to the callback, so no other route ever sees it. */
const FLOW_COOKIE_PATH = `${AUTH_BASE_PATH}/callback`;
const TAG = "providers";
/** A path under the auth base path (`/api/auth`). */
const path = (name: string) => `${AUTH_BASE_PATH}${name}`;

/**
 * Provider sign-in under /api/auth with better-auth's paths and bodies (its client's
 * `signIn.social`, `linkSocial`, `listAccounts`, `unlinkAccount` work): docs/sign-in-providers.md.
 * The callback ends through sign-in/finish.ts in the same session cookie as email sign-in, so
 * get-session then answers with `set-auth-jwt` as for any other session; a user with two-factor
 * on is sent to the web app's second-factor page with the pending cookie instead.
 */
export function socialRoutes(
  { signIn: social, linked }: Social,
  guards: IdentityGuards,
  cookie: CookieSettings,
  signIns: SignInFinisher,
): AnyRoute[] {
  // SameSite=Lax: the provider's redirect back is a top-level GET, which carries Lax cookies.
  const flowCookie = cookie.name.replace(/session_token$/, "oauth_flow");
  const flowOptions: CookieOptions = { httpOnly: true, sameSite: "lax", secure: cookie.secure, path: FLOW_COOKIE_PATH };

  return [
    defineRoute({
      method: "get",
      path: path("/providers"),
      guards: [guards.origin, guards.noStore],
      tag: TAG,
      summary: "The configured sign-in providers (the web app's buttons)",
      response: socialProvidersResponse,
      reply: "json",
      handler: () => social.list(),
    }),
    defineRoute({
      method: "post",
      path: path("/sign-in/social"),
      tag: TAG,
      summary: "Start sign-in at a provider: its authorization URL, and the flow cookie",
      body: signInSocialBody,
      response: signInSocialResponse,
      reply: "json",
      // Provider sign-in shares the email sign-in budget per IP (each one starts a flow at a provider).
      guards: [guards.origin, guards.noStore, guards.limits.signInPerIp, guards.body],
      handler: async ({ body, res }) => {
        const { url, sealed } = await social.start(body);
        res.cookie(flowCookie, sealed, { ...flowOptions, maxAge: FLOW_TTL_SECONDS * 1000 });
        return { url, redirect: body.disableRedirect !== true };
      },
    }),
    // A signed-in user whose address is verified adds a provider identity (the way an owner who
    // got account_not_linked, or reset the password, links a provider again).
    defineRoute({
      method: "post",
      path: path("/link-social"),
      tag: TAG,
      summary: "Link a provider identity to the signed-in, verified user",
      body: linkSocialBody,
      response: signInSocialResponse,
      reply: "json",
      guards: [guards.origin, guards.noStore, guards.body, guards.cookies, guards.signedIn, guards.notImpersonated],
      handler: async ({ body, res }) => {
        const active = signedInUser(res);
        if (!active.user.emailVerified) throw new AppError("email_not_verified", "verify your email address before linking a provider");
        const { url, sealed } = await social.start(body, { userId: active.user.id, sessionId: active.session.id });
        res.cookie(flowCookie, sealed, { ...flowOptions, maxAge: FLOW_TTL_SECONDS * 1000 });
        return { url, redirect: body.disableRedirect !== true };
      },
    }),
    defineRoute({
      method: "get",
      path: path("/callback/:provider"),
      tag: TAG,
      summary: "The provider's redirect back: signs in (or links) and redirects to the callback",
      params: z.object({ provider: z.string() }),
      reply: { raw: "redirect" },
      guards: [guards.origin, guards.noStore, guards.cookies],
      handler: async ({ params, req, res }) => {
        const sealed = (req.cookies as Record<string, unknown> | undefined)?.[flowCookie];
        // The flow cookie is single-use in this browser whatever the outcome.
        res.clearCookie(flowCookie, flowOptions);
        // The redirect URI with this request's query: what openid-client reads the response from.
        const current = new URL(social.redirectUri(params.provider));
        current.search = new URL(req.originalUrl, "http://localhost").search;
        try {
          const done = await social.finish(
            params.provider,
            current,
            typeof sealed === "string" ? sealed : undefined,
            (user) => signIns.finish(req, res, user, { method: "provider" }),
            requestFacts(req),
          );
          res.redirect(302, done.linked || done.signedIn.kind === "session" ? done.redirectTo : twoFactorPage(done.redirectTo));
        } catch (error) {
          if (error instanceof SocialCallbackError) return res.redirect(302, error.redirectTo);
          throw error;
        }
      },
    }),
    defineRoute({
      method: "get",
      path: path("/list-accounts"),
      tag: TAG,
      summary: "The user's ways to sign in: the password and linked providers",
      response: linkedAccountsResponse,
      reply: "json",
      guards: [guards.origin, guards.noStore, guards.cookies, guards.signedIn],
      handler: ({ res }) => linked.list(signedInUser(res).user.id),
    }),
    defineRoute({
      method: "post",
      path: path("/unlink-account"),
      tag: TAG,
      summary: "Unlink a provider identity while another way to sign in remains",
      body: unlinkAccountBody,
      response: statusResponse,
      reply: "json",
      guards: [guards.origin, guards.noStore, guards.body, guards.cookies, guards.signedIn, guards.notImpersonated],
      handler: async ({ body, res }) => {
        await linked.unlink(signedInUser(res).user.id, body);
        return { status: true as const };
      },
    }),
  ];
}

/**
 * The web app's second-factor page on the callback URL's origin, with the callback URL to go on
 * to once the second factor verifies (sign-in/finish.ts `TWO_FACTOR_PAGE`).
 */
function twoFactorPage(callbackURL: string): string {
  const page = new URL(TWO_FACTOR_PAGE, callbackURL);
  page.searchParams.set("callbackURL", callbackURL);
  return page.href;
}
