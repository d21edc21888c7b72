import {
  changeEmailBody,
  changePasswordBody,
  deleteUserBody,
  type ListedSession,
  mailTokenSchema,
  requestPasswordResetBody,
  resetPasswordBody,
  resetPasswordLinkQuery,
  revokeSessionBody,
  type StatusResponse,
  sendVerificationEmailBody,
  type TokenResponse,
  updateUserBody,
  verifyEmailConfirmBody,
  verifyEmailConfirmQuery,
  verifyEmailQuery,
} from "@app/contracts";
import { AppError, isAppError, parseOrThrow } from "@app/http-kit";
import { type Request, type Response, Router } from "express";
import { type CookieSettings, clearSessionCookie, readSessionCookie, requireSession } from "../middleware/session-cookie.js";
import { withQuery } from "../services/callback-url.js";
import type { IdentityService } from "../services/identity.js";
import type { FoundToken } from "../services/mail-tokens.js";
import { type LinkProof, VERIFY_LINK_PURPOSES } from "../services/mailed-links.js";
import { publicUser } from "./auth-routes.js";
import { confirmationPage, emailChangedPage, homeOf, invalidLinkPage, isServiceBase, linkSentPage, verifiedPage } from "./link-pages.js";

const STATUS: StatusResponse = { status: true };

/**
 * The account lifecycle routes under /api/auth (docs/accounts.md), with better-auth's paths and
 * bodies so its client works: mailed flows (reset, verification, email change) and the signed-in
 * user's own settings (password, profile, sessions, deletion, a JWT). Each one parses, calls a
 * service and responds.
 */
export function accountRoutes(service: IdentityService, cookie: CookieSettings): Router {
  const router = Router();

  const signedIn = (req: Request, res: Response) => requireSession(service.sessions, cookie, req, res);

  router.post("/request-password-reset", async (req, res) => {
    await service.recovery.requestPasswordReset(parseOrThrow(requestPasswordResetBody, req.body));
    res.status(200).json({ ...STATUS, message: "If this email exists in our system, check your email for the reset link" });
  });

  router.get("/reset-password/:token", async (req, res) => {
    const { callbackURL } = parseOrThrow(resetPasswordLinkQuery, req.query, "query");
    const callback = service.recovery.callback(callbackURL, "/reset-password");
    const token = req.params.token ?? "";
    const valid = mailTokenSchema.safeParse(token).success && (await service.recovery.resetTokenValid(token));
    res.redirect(302, withQuery(callback, valid ? { token } : { error: "INVALID_TOKEN" }));
  });

  router.post("/reset-password", async (req, res) => {
    const body = parseOrThrow(resetPasswordBody, req.body);
    const token = body.token ?? (typeof req.query.token === "string" ? req.query.token : undefined);
    if (!token) throw new AppError("invalid_token", "token is required");
    await service.links.resetPassword(token, body.newPassword);
    res.status(200).json(STATUS);
  });

  router.post("/send-verification-email", async (req, res) => {
    await service.recovery.sendVerificationEmail(parseOrThrow(sendVerificationEmailBody, req.body));
    res.status(200).json(STATUS);
  });

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

  /**
   * A link's callback, checked (403 else). One on the service's own base names no page there
   * (link-pages.ts): a browser lands on identity's page instead, and the one-click page leaves it
   * out of its form (`page`); API clients keep it, as before.
   */
  const callbackOf = (req: Request, raw: string | undefined) => {
    const checked = raw === undefined ? undefined : service.recovery.callback(raw);
    const page = checked && isServiceBase(checked, links.baseUrl) ? undefined : checked;
    return { callback: wantsPage(req) ? page : checked, page };
  };

  /**
   * A used link without a callback, in a browser: a verification goes to the link's landing,
   * `?token=…&verified=1` (relative, as the page's form action), which says "verified" and stays
   * true on a reload; a cleared password to the web app's reset page; a change to its page.
   */
  const landed = (req: Request, res: Response, found: FoundToken, token: string, resetToken: string | undefined) => {
    if (resetToken && home)
      return res.redirect(redirectStatus(req), withQuery(new URL("/reset-password", home).href, { token: resetToken }));
    if (resetToken) return verifiedPage(res, { already: false, continueTo: home, passwordEnded: true });
    if (found.purpose !== "verify-email") return emailChangedPage(res, home);
    res.redirect(redirectStatus(req), `?${new URLSearchParams({ token, verified: "1" })}`);
  };

  /** Uses a link and answers: a redirect to the callback (or the reset page), a page, or JSON. */
  const useLink = async (req: Request, res: Response, found: FoundToken, token: string, proof: LinkProof, callback: string | undefined) => {
    const json = req.method === "POST" && Boolean(req.is("application/json"));
    try {
      const { user, resetToken, pendingEmail } = await service.links.use(found, proof, callback);
      if (pendingEmail && !json) return linkSentPage(res, pendingEmail);
      // The password ended: the clicker chooses a new one on the reset page, as the reset link's GET sends them.
      const next = callback && resetToken ? withQuery(new URL("/reset-password", callback).href, { token: resetToken }) : callback;
      if (next && !json) return res.redirect(redirectStatus(req), next);
      if (!json && wantsPage(req)) return landed(req, res, found, token, resetToken);
      res.status(200).json({ ...STATUS, user: publicUser(user), ...(next ? { redirectTo: next } : resetToken ? { resetToken } : {}) });
    } catch (error) {
      if (callback && !json && isAppError(error) && (error.code === "invalid_token" || error.code === "email_taken")) {
        return res.redirect(303, withQuery(callback, { error: error.code === "email_taken" ? "EMAIL_TAKEN" : "INVALID_TOKEN" }));
      }
      if (!json && wantsPage(req) && isAppError(error) && error.code === "invalid_token") return invalidLinkPage(res, home);
      throw error;
    }
  };

  /**
   * A token no link of these purposes has. A browser opening a used verification link of an
   * address that is verified learns just that (and where to continue); anything else is invalid:
   * a redirect with the error to the callback, a page, or 400 `invalid_token`.
   */
  const invalidLink = async (req: Request, res: Response, token: string, callback: string | undefined) => {
    const json = Boolean(req.is("application/json"));
    if (!json && wantsPage(req) && (await service.mailTokens.verifiedBySpent(token))) {
      return verifiedPage(res, { already: req.query.verified !== "1", continueTo: callback ?? home });
    }
    if (callback && !json) return res.redirect(redirectStatus(req), withQuery(callback, { error: "INVALID_TOKEN" }));
    if (!json && wantsPage(req)) return invalidLinkPage(res, home);
    throw new AppError("invalid_token", "the link is invalid, used or expired");
  };

  // A GET changes nothing unless it carries a live session of the link's user (better-auth's
  // client verifyEmail, a click in the browser that is signed in): a mail scanner's prefetch gets
  // the confirmation page, whose one click is the POST below.
  router.get("/verify-email", async (req, res) => {
    const query = parseOrThrow(verifyEmailQuery, req.query, "query");
    const { callback, page } = callbackOf(req, query.callbackURL);
    const found = await service.links.find(VERIFY_LINK_PURPOSES, query.token);
    if (!found) return invalidLink(req, res, query.token, callback);
    const sessionId = await sessionOf(req, found);
    // A revert ends that very session with the others: it always asks for the click.
    if (sessionId && found.purpose !== "revert-email-change") return useLink(req, res, found, query.token, { sessionId }, callback);
    confirmationPage(res, found, query.token, page, home);
  });

  router.post("/verify-email", async (req, res) => {
    const query = parseOrThrow(verifyEmailConfirmQuery, req.query, "query");
    const body = parseOrThrow(verifyEmailConfirmBody, req.body);
    const { callback } = callbackOf(req, body.callbackURL ?? query.callbackURL);
    const token = body.token ?? query.token;
    if (!token) throw new AppError("invalid_token", "token is required");
    const found = await service.links.find(VERIFY_LINK_PURPOSES, token);
    if (!found) return invalidLink(req, res, token, callback);
    await useLink(req, res, found, token, { sessionId: await sessionOf(req, found), password: body.password }, callback);
  });

  router.post("/change-password", async (req, res) => {
    const active = await signedIn(req, res);
    await service.settings.changePassword(active.session, parseOrThrow(changePasswordBody, req.body));
    res.status(200).json({ token: null, user: publicUser(active.user) });
  });

  router.post("/change-email", async (req, res) => {
    const active = await signedIn(req, res);
    await service.recovery.changeEmail(active.user, parseOrThrow(changeEmailBody, req.body));
    res.status(200).json(STATUS);
  });

  router.post("/update-user", async (req, res) => {
    const active = await signedIn(req, res);
    const user = await service.settings.updateUser(active.user.id, parseOrThrow(updateUserBody, req.body));
    res.status(200).json({ ...STATUS, user: publicUser(user) });
  });

  router.get("/list-sessions", async (req, res) => {
    const active = await signedIn(req, res);
    const sessions: ListedSession[] = await service.settings.listSessions(active.session);
    res.status(200).json(sessions);
  });

  router.post("/revoke-session", async (req, res) => {
    const active = await signedIn(req, res);
    const body = parseOrThrow(revokeSessionBody, req.body);
    // A cookie value is `<id>.<secret>`: only the id part names the session.
    const id = body.id ?? (body.token ?? "").split(".")[0] ?? "";
    await service.settings.revokeSession(active.user.id, id);
    if (id === active.session.id) clearSessionCookie(res, cookie);
    res.status(200).json(STATUS);
  });

  router.post("/revoke-other-sessions", async (req, res) => {
    const active = await signedIn(req, res);
    await service.settings.revokeOtherSessions(active.session);
    res.status(200).json(STATUS);
  });

  router.post("/delete-user", async (req, res) => {
    const active = await signedIn(req, res);
    const body = parseOrThrow(deleteUserBody, req.body);
    await service.settings.deleteUser(active.user.id, body.password);
    clearSessionCookie(res, cookie);
    res.status(200).json({ success: true, message: "User deleted" });
  });

  router.get("/token", async (req, res) => {
    const active = await signedIn(req, res);
    const body: TokenResponse = { token: await service.issueJwt(active.user) };
    res.status(200).json(body);
  });

  return router;
}
