import { AUTH_BASE_PATH, linkSocialBody, SESSION_COOKIE_SUFFIX, signInSocialBody, unlinkAccountBody } from "@app/contracts";
import { AppError, parseOrThrow } from "@app/http-kit";
import { type CookieOptions, type Request, type Response, Router } from "express";
import { type CookieSettings, requireSession, setSessionCookie } from "../middleware/session-cookie.js";
import type { IdentityService } from "../services/identity.js";
import { FLOW_TTL_SECONDS } from "../services/oidc/flow-state.js";
import type { Social } from "../services/oidc/index.js";
import { SocialCallbackError } from "../services/oidc/social-sign-in.js";
import { meta } from "./auth-routes.js";

/** The flow cookie is sent only to the callback, so no other route ever sees it. */
const FLOW_COOKIE_PATH = `${AUTH_BASE_PATH}/callback`;

/**
 * Provider sign-in under /api/auth with better-auth's paths and bodies (its client's
 * `signIn.social`, `linkSocial`, `listAccounts`, `unlinkAccount` work): docs/sign-in-providers.md.
 * The callback ends in the same session cookie as email sign-in, so get-session then answers
 * with `set-auth-jwt` as for any other session.
 */
export function socialRoutes(service: IdentityService, { signIn: social, linked }: Social, cookie: CookieSettings): Router {
  const router = Router();
  // SameSite=Lax: the provider's redirect back is a top-level GET, which carries Lax cookies.
  // `<prefix>.session_token` → `<prefix>.oauth_flow`.
  const prefix = cookie.name.endsWith(SESSION_COOKIE_SUFFIX) ? cookie.name.slice(0, -SESSION_COOKIE_SUFFIX.length) : cookie.name;
  const flowCookie = `${prefix}.oauth_flow`;
  const flowOptions: CookieOptions = { httpOnly: true, sameSite: "lax", secure: cookie.secure, path: FLOW_COOKIE_PATH };

  const signedIn = (req: Request, res: Response) => requireSession(service.sessions, cookie, req, res);

  router.get("/providers", (_req, res) => {
    res.status(200).json(social.list());
  });

  router.post("/sign-in/social", async (req, res) => {
    const body = parseOrThrow(signInSocialBody, req.body);
    const { url, sealed } = await social.start(body);
    res.cookie(flowCookie, sealed, { ...flowOptions, maxAge: FLOW_TTL_SECONDS * 1000 });
    res.status(200).json({ url, redirect: body.disableRedirect !== true });
  });

  // A signed-in user whose address is verified adds a provider identity (the way an owner who
  // got account_not_linked, or reset the password, links a provider again).
  router.post("/link-social", async (req, res) => {
    const active = await signedIn(req, res);
    const body = parseOrThrow(linkSocialBody, req.body);
    if (!active.user.emailVerified) throw new AppError("email_not_verified", "verify your email address before linking a provider");
    const { url, sealed } = await social.start(body, { userId: active.user.id, sessionId: active.session.id });
    res.cookie(flowCookie, sealed, { ...flowOptions, maxAge: FLOW_TTL_SECONDS * 1000 });
    res.status(200).json({ url, redirect: body.disableRedirect !== true });
  });

  router.get("/callback/:provider", async (req, res) => {
    const sealed = (req.cookies as Record<string, unknown> | undefined)?.[flowCookie];
    // The flow cookie is single-use in this browser whatever the outcome.
    res.clearCookie(flowCookie, flowOptions);
    // The redirect URI with this request's query: what openid-client reads the response from.
    const current = new URL(social.redirectUri(req.params.provider ?? ""));
    current.search = new URL(req.originalUrl, "http://localhost").search;
    try {
      const done = await social.finish(req.params.provider ?? "", current, typeof sealed === "string" ? sealed : undefined, meta(req));
      if (!done.linked) setSessionCookie(res, cookie, done.token, done.session.expiresAt);
      res.redirect(302, done.redirectTo);
    } catch (error) {
      if (error instanceof SocialCallbackError) return res.redirect(302, error.redirectTo);
      throw error;
    }
  });

  router.get("/list-accounts", async (req, res) => {
    const active = await signedIn(req, res);
    res.status(200).json(await linked.list(active.user.id));
  });

  router.post("/unlink-account", async (req, res) => {
    const active = await signedIn(req, res);
    const body = parseOrThrow(unlinkAccountBody, req.body);
    await linked.unlink(active.user.id, body);
    res.status(200).json({ status: true });
  });

  return router;
}
