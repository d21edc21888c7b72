import {
  AUTH_BASE_PATH,
  deleteUserCallbackQuery,
  deleteUserResponse,
  mailTokenSchema,
  resetPasswordBody,
  resetPasswordLinkQuery,
  type StatusResponse,
  statusResponse,
  verifyEmailConfirmBody,
  verifyEmailConfirmQuery,
  verifyEmailQuery,
  verifyEmailResponse,
} from "@app/contracts";
import { ANSWERED, type Answered, type AnyRoute, AppError, defineRoute, isAppError } from "@app/http-kit";
import type { Request, Response } from "express";
import { z } from "zod";
import type { IdentityGuards } from "../middleware/guards.js";
import { type CookieSettings, clearSessionCookie, readSessionCookie } from "../middleware/session-cookie.js";
import { requestFacts } from "../security-events/record.js";
import { withQuery } from "../services/callback-url.js";
import type { IdentityService } from "../services/identity.js";
import type { FoundToken } from "../services/mail-tokens.js";
import { type LinkProof, VERIFY_LINK_PURPOSES } from "../services/mailed-links.js";
import {
  accountDeletedPage,
  confirmationPage,
  emailChangedPage,
  homeOf,
  invalidLinkPage,
  isServiceBase,
  linkSentPage,
  signInToDeletePage,
  verifiedPage,
} from "../views/link-pages.js";
import { publicUser } from "../views/public.js";

const STATUS: StatusResponse = { status: true };
/** A path under the auth base path (`/api/auth`). */
const path = (name: string) => `${AUTH_BASE_PATH}${name}`;
const TAG = "mailed links";
type VerifyAnswer = z.input<typeof verifyEmailResponse> | Answered;
type DeleteAnswer = z.input<typeof deleteUserResponse> | Answered;

/**
 * The mailed links under /api/auth (docs/accounts.md): the reset link and the password it sets,
 * the verification and email-change links, and the deletion link. A browser gets a redirect to the link's callback
 * or one of identity's own pages (views/link-pages.ts); API clients and better-auth's client get
 * JSON.
 */
export function mailedLinkRoutes(service: IdentityService, guards: IdentityGuards, cookie: CookieSettings): AnyRoute[] {
  const { limits } = guards;

  /** The live session the request carries, when it is the link's user's (a mail scanner has none). */
  const sessionOf = async (req: Request, found: FoundToken): Promise<string | undefined> => {
    const active = await service.sessions.validate(readSessionCookie(req, cookie));
    return active?.user.id === found.userId ? active.session.id : undefined;
  };

  const links = service.recovery.linkSettings;
  /** "Continue" on identity's own pages: the web app, when a trusted origin names it. */
  const home = homeOf(links.trustedOrigins);

  /** A browser's navigation (HTML preferred); API clients and better-auth's client get JSON. */
  const wantsPage = (req: Request) => req.accepts(["json", "html"]) === "html";
  const redirectStatus = (req: Request) => (req.method === "POST" ? 303 : 302);
  const redirect = (req: Request, res: Response, to: string, status = redirectStatus(req)): Answered => {
    res.redirect(status, to);
    return ANSWERED;
  };
  const page = (write: () => void): Answered => {
    write();
    return ANSWERED;
  };

  /**
   * A link's callback, checked (403 else). One on the service's own base names no page there
   * (views/link-pages.ts): a browser lands on identity's page instead, and the one-click page
   * leaves it out of its form (`page`); API clients keep it.
   */
  const callbackOf = (req: Request, raw: string | undefined) => {
    const checked = raw === undefined ? undefined : service.recovery.callback(raw);
    const pageCallback = checked && isServiceBase(checked, links.baseUrl) ? undefined : checked;
    return { callback: wantsPage(req) ? pageCallback : checked, page: pageCallback };
  };

  /**
   * A used link without a callback, in a browser: a verification goes to the link's landing,
   * `?token=…&verified=1` (relative, as the page's form action), which says "verified" and stays
   * true on a reload; a cleared password to the web app's reset page; a change to its page.
   */
  const landed = (req: Request, res: Response, found: FoundToken, token: string, resetToken: string | undefined): Answered => {
    if (resetToken && home) return redirect(req, res, withQuery(new URL("/reset-password", home).href, { token: resetToken }));
    if (resetToken) return page(() => verifiedPage(res, { already: false, continueTo: home, passwordEnded: true }));
    if (found.purpose !== "verify-email") return page(() => emailChangedPage(res, home));
    return redirect(req, res, `?${new URLSearchParams({ token, verified: "1" })}`);
  };

  /** Uses a link and answers: a redirect to the callback (or the reset page), a page, or JSON. */
  const useLink = async (
    req: Request,
    res: Response,
    found: FoundToken,
    token: string,
    proof: LinkProof,
    callback: string | undefined,
  ): Promise<VerifyAnswer> => {
    const json = req.method === "POST" && Boolean(req.is("application/json"));
    try {
      const { user, resetToken, pendingEmail } = await service.links.use(found, proof, callback, requestFacts(req));
      if (pendingEmail && !json) return page(() => linkSentPage(res, pendingEmail));
      // The password ended: the clicker chooses a new one on the reset page, as the reset link's GET sends them.
      const next = callback && resetToken ? withQuery(new URL("/reset-password", callback).href, { token: resetToken }) : callback;
      if (next && !json) return redirect(req, res, next);
      if (!json && wantsPage(req)) return landed(req, res, found, token, resetToken);
      return { ...STATUS, user: publicUser(user), ...(next ? { redirectTo: next } : resetToken ? { resetToken } : {}) };
    } catch (error) {
      if (callback && !json && isAppError(error) && (error.code === "invalid_token" || error.code === "email_taken")) {
        return redirect(req, res, withQuery(callback, { error: error.code === "email_taken" ? "EMAIL_TAKEN" : "INVALID_TOKEN" }), 303);
      }
      if (!json && wantsPage(req) && isAppError(error) && error.code === "invalid_token") return page(() => invalidLinkPage(res, home));
      throw error;
    }
  };

  /**
   * A token no link of these purposes has. A browser opening a used verification link of an
   * address that is verified learns just that (and where to continue); anything else is invalid:
   * a redirect with the error to the callback, a page, or 400 `invalid_token`.
   */
  const invalidLink = async (req: Request, res: Response, token: string, callback: string | undefined): Promise<Answered> => {
    const json = Boolean(req.is("application/json"));
    if (!json && wantsPage(req) && (await service.mailTokens.verifiedBySpent(token))) {
      return page(() => verifiedPage(res, { already: req.query.verified !== "1", continueTo: callback ?? home }));
    }
    if (callback && !json) return redirect(req, res, withQuery(callback, { error: "INVALID_TOKEN" }));
    if (!json && wantsPage(req)) return page(() => invalidLinkPage(res, home));
    throw new AppError("invalid_token", "the link is invalid, used or expired");
  };

  return [
    defineRoute({
      method: "get",
      path: path("/reset-password/:token"),
      guards: [guards.origin, guards.noStore],
      tag: TAG,
      summary: "The reset link: redirects to the callback with the token, or with error=INVALID_TOKEN",
      params: z.object({ token: z.string() }),
      query: resetPasswordLinkQuery,
      reply: { raw: "redirect" },
      handler: async ({ params, query, res }) => {
        const callback = service.recovery.callback(query.callbackURL, "/reset-password");
        const valid = mailTokenSchema.safeParse(params.token).success && (await service.recovery.resetTokenValid(params.token));
        res.redirect(302, withQuery(callback, valid ? { token: params.token } : { error: "INVALID_TOKEN" }));
      },
    }),
    defineRoute({
      method: "post",
      path: path("/reset-password"),
      tag: TAG,
      summary: "Set a new password with a reset token (body or ?token=)",
      body: resetPasswordBody,
      response: statusResponse,
      reply: "json",
      guards: [guards.origin, guards.noStore, limits.resetPasswordPerIp, guards.body, guards.passwordQueue],
      handler: async ({ body, req }) => {
        const token = body.token ?? (typeof req.query.token === "string" ? req.query.token : undefined);
        if (!token) throw new AppError("invalid_token", "token is required");
        await service.links.resetPassword(token, body.newPassword, requestFacts(req));
        return STATUS;
      },
    }),
    // A GET changes nothing unless it carries a live session of the link's user (better-auth's
    // client verifyEmail, a click in the browser that is signed in): a mail scanner's prefetch gets
    // the confirmation page, whose one click is the POST below.
    defineRoute({
      method: "get",
      path: path("/verify-email"),
      tag: TAG,
      summary: "A verification or email-change link: JSON for API clients, the one-click page or a redirect for a browser",
      query: verifyEmailQuery,
      response: verifyEmailResponse,
      reply: "json",
      guards: [guards.origin, guards.noStore, guards.sessionCookies],
      handler: async ({ query, req, res }): Promise<VerifyAnswer> => {
        const { callback, page: pageCallback } = callbackOf(req, query.callbackURL);
        const found = await service.links.find(VERIFY_LINK_PURPOSES, query.token);
        if (!found) return invalidLink(req, res, query.token, callback);
        const sessionId = await sessionOf(req, found);
        // A revert ends that very session with the others: it always asks for the click.
        if (sessionId && found.purpose !== "revert-email-change") return useLink(req, res, found, query.token, { sessionId }, callback);
        return page(() => confirmationPage(res, found, query.token, pageCallback, home));
      },
    }),
    defineRoute({
      method: "post",
      path: path("/verify-email"),
      tag: TAG,
      summary: "The one click of a mailed link (token in the query or the body; the password keeps it)",
      query: verifyEmailConfirmQuery,
      body: verifyEmailConfirmBody,
      response: verifyEmailResponse,
      reply: "json",
      guards: [guards.origin, guards.noStore, limits.passwordPerIp, guards.body, guards.sessionCookies, guards.passwordQueue],
      handler: async ({ query, body, req, res }): Promise<VerifyAnswer> => {
        const { callback } = callbackOf(req, body.callbackURL ?? query.callbackURL);
        const token = body.token ?? query.token;
        if (!token) throw new AppError("invalid_token", "token is required");
        const found = await service.links.find(VERIFY_LINK_PURPOSES, token);
        if (!found) return invalidLink(req, res, token, callback);
        return useLink(req, res, found, token, { sessionId: await sessionOf(req, found), password: body.password }, callback);
      },
    }),
    // better-auth's deletion link: it deletes only for a live session of the user it went to, so
    // a mail scanner's prefetch (no session) or whoever else reads the mail deletes nothing.
    defineRoute({
      method: "get",
      path: path("/delete-user/callback"),
      tag: TAG,
      summary: "The mailed deletion link: deletes the signed-in account it was sent to, then redirects to the callback",
      query: deleteUserCallbackQuery,
      response: deleteUserResponse,
      reply: "json",
      guards: [guards.origin, guards.noStore, guards.sessionCookies],
      handler: async ({ query, req, res }): Promise<DeleteAnswer> => {
        const { callback } = callbackOf(req, query.callbackURL);
        const active = await service.sessions.validate(readSessionCookie(req, cookie));
        if (!active) {
          if (wantsPage(req)) return page(() => signInToDeletePage(res, home));
          throw new AppError("unauthorized", "sign in to the account, then open the link again");
        }
        try {
          await service.settings.deleteWithLink(active.user.id, query.token, service.mailTokens, requestFacts(req));
        } catch (error) {
          if (!isAppError(error) || error.code !== "invalid_token") throw error;
          if (callback) return redirect(req, res, withQuery(callback, { error: "INVALID_TOKEN" }));
          if (wantsPage(req)) return page(() => invalidLinkPage(res, home));
          throw error;
        }
        clearSessionCookie(res, cookie);
        if (callback) return redirect(req, res, callback);
        if (wantsPage(req)) return page(() => accountDeletedPage(res));
        return { success: true, message: "User deleted" };
      },
    }),
  ];
}
