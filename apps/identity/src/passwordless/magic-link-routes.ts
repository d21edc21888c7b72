import {
  AUTH_BASE_PATH,
  magicLinkConfirmBody,
  magicLinkConfirmQuery,
  magicLinkSentResponse,
  magicLinkVerifyQuery,
  type PasswordlessSignInResponse,
  passwordlessSignInResponse,
  signInMagicLinkBody,
} from "@app/contracts";
import { ANSWERED, type Answered, type AnyRoute, AppError, defineRoute, isAppError } from "@app/http-kit";
import type { Request, Response } from "express";
import type { FeatureDeps } from "../features.js";
import { requestFacts } from "../security-events/record.js";
import { trustedCallback, withQuery } from "../services/callback-url.js";
import { TWO_FACTOR_PAGE } from "../sign-in/finish.js";
import { homeOf, invalidLinkPage, isServiceBase } from "../views/link-pages.js";
import { signInAnswer } from "./answers.js";
import { MAGIC_LINK, type MagicLinkGrant } from "./challenges.js";
import type { LinkCallbacks, MagicLinks } from "./magic-link.js";
import { magicLinkPage, signedInPage } from "./pages.js";

const path = (name: string) => `${AUTH_BASE_PATH}${name}`;
const TAG = "passwordless";
type Answer = PasswordlessSignInResponse | Answered;

/** A browser's navigation (HTML preferred), as routes/mailed-links.ts tells it from API clients. */
const wantsPage = (req: Request) => req.accepts(["json", "html"]) === "html";
const invalidLink = () => new AppError("invalid_token", "the link is invalid, used or expired");

/**
 * The magic link's routes (better-auth's `magicLink` wire). Scanner safety mirrors verify-email
 * (routes/mailed-links.ts): a GET a mail scanner or a browser makes (HTML preferred, or a HEAD)
 * changes nothing and answers the one-click page, whose button POSTs the link; a GET from an API
 * client (better-auth's `magicLink.verify`, which asks for JSON) uses it, as better-auth does.
 */
export function magicLinkRoutes(deps: FeatureDeps, links: MagicLinks): AnyRoute[] {
  const { guards, config } = deps;
  const settings = { baseUrl: config.baseUrl, trustedOrigins: config.corsOrigins };
  const web = homeOf(config.corsOrigins);
  /** "Continue" after a link without a callback: the web app, when CORS_ORIGINS names it. */
  const home = web && !isServiceBase(web, config.baseUrl) ? web : undefined;

  /**
   * Each callback checked (403 `forbidden` off this site and its trusted origins) and absolute;
   * one on the service's own base names no page there (views/link-pages.ts) and is dropped.
   */
  const callbacksOf = (raw: LinkCallbacks): LinkCallbacks => {
    const checked = (value: string | undefined) => {
      if (value === undefined) return undefined;
      const url = trustedCallback(value, "/", settings);
      return isServiceBase(url, config.baseUrl) ? undefined : url;
    };
    return {
      callbackURL: checked(raw.callbackURL),
      newUserCallbackURL: checked(raw.newUserCallbackURL),
      errorCallbackURL: checked(raw.errorCallbackURL),
    };
  };

  const redirect = (req: Request, res: Response, to: string): Answered => {
    res.redirect(req.method === "POST" ? 303 : 302, to);
    return ANSWERED;
  };
  const page = (write: () => void): Answered => {
    write();
    return ANSWERED;
  };

  /** The web app's second-factor page on the callback's origin (or the web app's), the callback kept. */
  const twoFactorPage = (target: string | undefined) => {
    const url = new URL(TWO_FACTOR_PAGE, new URL(target ?? home ?? config.baseUrl).origin);
    return target ? withQuery(url.href, { callbackURL: target }) : url.href;
  };

  /** A link that is unknown, used or expired: `?error=INVALID_TOKEN` on the error callback, a page, or 400. */
  const invalid = (req: Request, res: Response, callbacks: LinkCallbacks, mayRedirect: boolean): Answered => {
    const target = callbacks.errorCallbackURL ?? callbacks.callbackURL;
    if (mayRedirect && target) return redirect(req, res, withQuery(target, { error: "INVALID_TOKEN" }));
    if (mayRedirect && wantsPage(req)) return page(() => invalidLinkPage(res, home));
    throw invalidLink();
  };

  /** A sign-in with a link that is unknown, used or expired: recorded as refused, then answered as {@link invalid}. */
  const refused = async (req: Request, res: Response, callbacks: LinkCallbacks, mayRedirect: boolean): Promise<Answered> => {
    await deps.signIns.failed(req, invalidLink(), { method: MAGIC_LINK });
    return invalid(req, res, callbacks, mayRedirect);
  };

  /**
   * Uses the link and signs in. `redirects`: a browser's form POST, or a GET with a callback (as
   * better-auth redirects then), goes to the new-user callback, the callback, the second-factor
   * page, or the web app; JSON otherwise.
   */
  const use = async (req: Request, res: Response, grant: MagicLinkGrant, callbacks: LinkCallbacks, redirects: boolean): Promise<Answer> => {
    let used: Awaited<ReturnType<MagicLinks["use"]>>;
    try {
      used = await deps.signIns.attempt(req, { method: MAGIC_LINK }, () => links.use(grant, requestFacts(req)));
    } catch (error) {
      if (isAppError(error) && error.code === "invalid_token") return invalid(req, res, callbacks, redirects);
      throw error;
    }
    const finished = await deps.signIns.finish(req, res, used.user, { method: MAGIC_LINK });
    if (!redirects) return signInAnswer(finished);
    const target = (used.created ? callbacks.newUserCallbackURL : undefined) ?? callbacks.callbackURL;
    if (finished.kind === "two-factor") return redirect(req, res, twoFactorPage(target));
    const next = target ?? home;
    return next ? redirect(req, res, next) : page(() => signedInPage(res));
  };

  /** The one-click page's form action: this path, relative, with the token and the callbacks. */
  const actionOf = (token: string, callbacks: LinkCallbacks) => {
    const query = new URLSearchParams({ token });
    for (const [name, value] of Object.entries(callbacks)) if (value) query.set(name, value);
    return `?${query}`;
  };
  const originsOf = (callbacks: LinkCallbacks) => [
    ...new Set([...Object.values(callbacks), home].flatMap((url) => (url ? [new URL(url).origin] : []))),
  ];

  return [
    defineRoute({
      method: "post",
      path: path("/sign-in/magic-link"),
      tag: TAG,
      summary: "Mail a sign-in link (5 minutes, single use) to any valid address: 200 for every one",
      body: signInMagicLinkBody,
      response: magicLinkSentResponse,
      reply: "json",
      guards: [guards.origin, guards.noStore, guards.limits.mailPerIp, guards.body, guards.limits.mailPerAddress],
      handler: async ({ body }) => {
        await links.send(body, callbacksOf(body));
        return { status: true as const };
      },
    }),
    defineRoute({
      method: "get",
      path: path("/magic-link/verify"),
      tag: TAG,
      summary: "The mailed link: the one-click page for a browser (unused), or sign-in for an API client",
      query: magicLinkVerifyQuery,
      response: passwordlessSignInResponse,
      reply: "json",
      guards: [guards.origin, guards.noStore],
      handler: async ({ query, req, res }): Promise<Answer> => {
        const callbacks = callbacksOf(query);
        const grant = await links.find(query.token);
        // A HEAD is answered by this route too (Express): it never uses the link either.
        if (req.method === "HEAD" || wantsPage(req)) {
          if (!grant) return invalid(req, res, callbacks, true);
          const action = actionOf(query.token, callbacks);
          return page(() => magicLinkPage(res, { action, email: grant.email, redirectOrigins: originsOf(callbacks) }));
        }
        if (!grant) return refused(req, res, callbacks, true);
        return use(req, res, grant, callbacks, callbacks.callbackURL !== undefined);
      },
    }),
    defineRoute({
      method: "post",
      path: path("/magic-link/verify"),
      tag: TAG,
      summary: "The one click of a magic link (token in the query or the body): signs in",
      query: magicLinkConfirmQuery,
      body: magicLinkConfirmBody,
      response: passwordlessSignInResponse,
      reply: "json",
      guards: [guards.origin, guards.noStore, guards.limits.signInPerIp, guards.body],
      handler: async ({ query, body, req, res }): Promise<Answer> => {
        const json = Boolean(req.is("application/json"));
        const callbacks = callbacksOf({
          callbackURL: body.callbackURL ?? query.callbackURL,
          newUserCallbackURL: body.newUserCallbackURL ?? query.newUserCallbackURL,
          errorCallbackURL: body.errorCallbackURL ?? query.errorCallbackURL,
        });
        const token = body.token ?? query.token;
        const grant = token === undefined ? undefined : await links.find(token);
        if (!grant) return refused(req, res, callbacks, !json);
        return use(req, res, grant, callbacks, !json);
      },
    }),
  ];
}
