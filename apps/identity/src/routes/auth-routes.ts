import { SET_AUTH_JWT_HEADER, signInBody, signUpBody } from "@app/contracts";
import type { Session } from "@app/db";
import { AppError, parseOrThrow } from "@app/http-kit";
import { type Request, type Response, Router } from "express";
import { type CookieSettings, clearSessionCookie, readSessionCookie, setSessionCookie } from "../middleware/session-cookie.js";
import type { IdentityService } from "../services/identity.js";
import type { SignUpUser, VerifiedSignUp } from "../services/verified-sign-up.js";

/** The public JSON view of a user. */
export function publicUser(user: SignUpUser) {
  return {
    id: user.id,
    email: user.email,
    name: user.name,
    emailVerified: user.emailVerified,
    image: user.image,
    createdAt: user.createdAt.toISOString(),
    updatedAt: user.updatedAt.toISOString(),
  };
}

/** The public JSON view of a session (never its secret). */
export function publicSession(session: Session) {
  return { id: session.id, userId: session.userId, expiresAt: session.expiresAt.toISOString(), createdAt: session.createdAt.toISOString() };
}

export function meta(req: Request) {
  return { ipAddress: req.ip, userAgent: req.get("user-agent") };
}

/**
 * The identity area's routes, mounted at /api/auth. Each one parses, calls the service and
 * responds. Sign-in and sign-up set the session cookie and never carry a JWT; get-session is
 * the only response with `set-auth-jwt`. With `verifiedSignUp` (REQUIRE_EMAIL_VERIFICATION),
 * sign-up signs nobody in and answers better-auth's `{ token: null, user }` for new and taken
 * addresses alike; without it a taken address answers 409 `email_taken` (docs/accounts.md).
 */
export function authRoutes(service: IdentityService, cookie: CookieSettings, verifiedSignUp?: VerifiedSignUp): Router {
  const router = Router();

  router.post("/sign-up/email", async (req, res) => {
    const body = parseOrThrow(signUpBody, req.body);
    if (verifiedSignUp) {
      const user = await verifiedSignUp.signUp(body);
      res.status(200).json({ token: null, user: publicUser(user) });
      return;
    }
    const { token, session, user } = await service.signUp(body, meta(req));
    setSessionCookie(res, cookie, token, session.expiresAt);
    res.status(200).json({ session: publicSession(session), user: publicUser(user) });
  });

  router.post("/sign-in/email", async (req, res) => {
    const body = parseOrThrow(signInBody, req.body);
    const { token, session, user } = await service.signIn(body, meta(req));
    setSessionCookie(res, cookie, token, body.rememberMe === false ? undefined : session.expiresAt);
    res.status(200).json({ session: publicSession(session), user: publicUser(user) });
  });

  const getSession = async (req: Request, res: Response) => {
    const token = readSessionCookie(req, cookie);
    const result = await service.getSession(token);
    if (!result) {
      if (token !== undefined) clearSessionCookie(res, cookie);
      // GET answers as better-auth does (200, null: its client reads "signed out"); POST, the
      // contract's step 2, answers 401 (packages/client and the API's cookie path rely on it).
      if (req.method === "GET") {
        res.status(200).json(null);
        return;
      }
      throw new AppError("unauthorized", "no valid session: sign in first");
    }
    if (result.renewedToken) setSessionCookie(res, cookie, result.renewedToken, result.session.expiresAt);
    res.setHeader("cache-control", "no-store");
    res.setHeader(SET_AUTH_JWT_HEADER, result.jwt);
    res.status(200).json({ session: publicSession(result.session), user: publicUser(result.user) });
  };
  router.get("/get-session", getSession);
  router.post("/get-session", getSession);

  router.post("/sign-out", async (req, res) => {
    await service.signOut(readSessionCookie(req, cookie));
    clearSessionCookie(res, cookie);
    res.status(200).json({ success: true });
  });

  router.get("/jwks", async (_req, res) => {
    const keys = await service.publicKeys();
    res.setHeader("cache-control", "public, max-age=600");
    res.status(200).json({ keys });
  });

  return router;
}
