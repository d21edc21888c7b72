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
  verifyEmailQuery,
} from "@app/contracts";
import { AppError, isAppError, parseOrThrow } from "@app/http-kit";
import { type Request, type Response, Router } from "express";
import { type CookieSettings, clearSessionCookie, requireSession } from "../middleware/session-cookie.js";
import { withQuery } from "../services/callback-url.js";
import type { IdentityService } from "../services/identity.js";
import { publicUser } from "./auth-routes.js";

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
    await service.recovery.resetPassword(token, body.newPassword);
    res.status(200).json(STATUS);
  });

  router.post("/send-verification-email", async (req, res) => {
    await service.recovery.sendVerificationEmail(parseOrThrow(sendVerificationEmailBody, req.body));
    res.status(200).json(STATUS);
  });

  router.get("/verify-email", async (req, res) => {
    const query = parseOrThrow(verifyEmailQuery, req.query, "query");
    const callback = query.callbackURL === undefined ? undefined : service.recovery.callback(query.callbackURL);
    try {
      const { user } = await service.recovery.verifyEmail(query.token);
      if (callback) return res.redirect(302, callback);
      res.status(200).json({ ...STATUS, user: publicUser(user) });
    } catch (error) {
      if (callback && isAppError(error) && (error.code === "invalid_token" || error.code === "email_taken")) {
        return res.redirect(302, withQuery(callback, { error: error.code === "email_taken" ? "EMAIL_TAKEN" : "INVALID_TOKEN" }));
      }
      throw error;
    }
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
