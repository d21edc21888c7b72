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
import { confirmationPage, linkSentPage } from "./link-pages.js";

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

  /** Uses a link and answers: a redirect to the callback (or the reset page), or JSON. */
  const useLink = async (req: Request, res: Response, found: FoundToken, proof: LinkProof, callback: string | undefined) => {
    const json = req.method === "POST" && Boolean(req.is("application/json"));
    try {
      const { user, resetToken, pendingEmail } = await service.links.use(found, proof, callback);
      if (pendingEmail && !json) return linkSentPage(res, pendingEmail);
      // The password ended: the clicker chooses a new one on the reset page, as the reset link's GET sends them.
      const next = callback && resetToken ? withQuery(new URL("/reset-password", callback).href, { token: resetToken }) : callback;
      if (next && !json) return res.redirect(req.method === "POST" ? 303 : 302, next);
      res.status(200).json({ ...STATUS, user: publicUser(user), ...(next ? { redirectTo: next } : resetToken ? { resetToken } : {}) });
    } catch (error) {
      if (callback && !json && isAppError(error) && (error.code === "invalid_token" || error.code === "email_taken")) {
        return res.redirect(303, withQuery(callback, { error: error.code === "email_taken" ? "EMAIL_TAKEN" : "INVALID_TOKEN" }));
      }
      throw error;
    }
  };

  const invalidLink = (req: Request, res: Response, callback: string | undefined) => {
    if (callback && !req.is("application/json"))
      return res.redirect(req.method === "POST" ? 303 : 302, withQuery(callback, { error: "INVALID_TOKEN" }));
    throw new AppError("invalid_token", "the link is invalid, used or expired");
  };

  // A GET changes nothing unless it carries a live session of the link's user (better-auth's
  // client verifyEmail, a click in the browser that is signed in): a mail scanner's prefetch gets
  // the confirmation page, whose one click is the POST below.
  router.get("/verify-email", async (req, res) => {
    const query = parseOrThrow(verifyEmailQuery, req.query, "query");
    const callback = query.callbackURL === undefined ? undefined : service.recovery.callback(query.callbackURL);
    const found = await service.links.find(VERIFY_LINK_PURPOSES, query.token);
    if (!found) return invalidLink(req, res, callback);
    const sessionId = await sessionOf(req, found);
    // A revert ends that very session with the others: it always asks for the click.
    if (sessionId && found.purpose !== "revert-email-change") return useLink(req, res, found, { sessionId }, callback);
    confirmationPage(res, found, query.token, callback);
  });

  router.post("/verify-email", async (req, res) => {
    const query = parseOrThrow(verifyEmailConfirmQuery, req.query, "query");
    const body = parseOrThrow(verifyEmailConfirmBody, req.body);
    const raw = body.callbackURL ?? query.callbackURL;
    const callback = raw === undefined ? undefined : service.recovery.callback(raw);
    const token = body.token ?? query.token;
    if (!token) throw new AppError("invalid_token", "token is required");
    const found = await service.links.find(VERIFY_LINK_PURPOSES, token);
    if (!found) return invalidLink(req, res, callback);
    await useLink(req, res, found, { sessionId: await sessionOf(req, found), password: body.password }, callback);
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
