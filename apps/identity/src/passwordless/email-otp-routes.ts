import {
  AUTH_BASE_PATH,
  checkVerificationOtpBody,
  otpSuccessResponse,
  passwordlessSignInResponse,
  requestPasswordResetOtpBody,
  resetPasswordOtpBody,
  sendVerificationOtpBody,
  signInEmailOtpBody,
  verifyEmailOtpBody,
  verifyEmailOtpResponse,
} from "@app/contracts";
import { type AnyRoute, defineRoute } from "@app/http-kit";
import type { Request } from "express";
import type { FeatureDeps } from "../features.js";
import { readSessionCookie } from "../middleware/session-cookie.js";
import { requestFacts } from "../security-events/record.js";
import { publicUser } from "../views/public.js";
import { signInAnswer } from "./answers.js";
import type { EmailOtps } from "./email-otp.js";

const path = (name: string) => `${AUTH_BASE_PATH}${name}`;
const TAG = "passwordless";
const SUCCESS = { success: true as const };

/**
 * The emailed codes' routes (better-auth's `emailOTP` wire). Sending counts against the mail
 * limits (per IP before the body, per address after it); using a code against the sign-in limit
 * per IP, besides the three tries of each code.
 */
export function emailOtpRoutes(deps: FeatureDeps, otps: EmailOtps): AnyRoute[] {
  const { guards } = deps;
  const { limits } = guards;
  const sending = [guards.origin, guards.noStore, limits.mailPerIp, guards.body, limits.mailPerAddress];
  const using = [guards.origin, guards.noStore, limits.signInPerIp, guards.body];

  /** The id of the request's live session when it is `userId`'s (the verification code keeps it). */
  const sessionOf = (req: Request) => async (userId: string) => {
    const active = await deps.service.sessions.validate(readSessionCookie(req, deps.cookie));
    return active?.user.id === userId ? active.session.id : undefined;
  };

  /** POST request-password-reset and its older name: a reset code to an account's address. */
  const resetCodeRoute = (name: string, summary: string) =>
    defineRoute({
      method: "post",
      path: path(name),
      tag: TAG,
      summary,
      body: requestPasswordResetOtpBody,
      response: otpSuccessResponse,
      reply: "json",
      guards: sending,
      handler: async ({ body }) => {
        await otps.send(body.email, "forget-password");
        return SUCCESS;
      },
    });

  return [
    defineRoute({
      method: "post",
      path: path("/email-otp/send-verification-otp"),
      tag: TAG,
      summary: "Mail a 6-digit code (sign-in, email-verification or forget-password): 200 for every address",
      body: sendVerificationOtpBody,
      response: otpSuccessResponse,
      reply: "json",
      guards: sending,
      handler: async ({ body }) => {
        await otps.send(body.email, body.type);
        return SUCCESS;
      },
    }),
    resetCodeRoute("/email-otp/request-password-reset", "Mail a password reset code to an account's address: 200 for every address"),
    resetCodeRoute("/forget-password/email-otp", "Mail a password reset code (better-auth's older path of request-password-reset)"),
    defineRoute({
      method: "post",
      path: path("/email-otp/check-verification-otp"),
      tag: TAG,
      summary: "Check a code without using it (a wrong one spends a try)",
      body: checkVerificationOtpBody,
      response: otpSuccessResponse,
      reply: "json",
      guards: using,
      handler: async ({ body }) => {
        await otps.check(body.email, body.type, body.otp);
        return SUCCESS;
      },
    }),
    defineRoute({
      method: "post",
      path: path("/sign-in/email-otp"),
      tag: TAG,
      summary: "Sign in with a sign-in code (creates the account when there is none)",
      body: signInEmailOtpBody,
      response: passwordlessSignInResponse,
      reply: "json",
      guards: using,
      handler: async ({ body, req, res }) => {
        const user = await deps.signIns.attempt(req, { method: "email-otp" }, () => otps.signIn(body, requestFacts(req)));
        return signInAnswer(await deps.signIns.finish(req, res, user, { method: "email-otp" }));
      },
    }),
    defineRoute({
      method: "post",
      path: path("/email-otp/verify-email"),
      tag: TAG,
      summary: "Verify the address with a verification code (signs nobody in)",
      body: verifyEmailOtpBody,
      response: verifyEmailOtpResponse,
      reply: "json",
      guards: [...using, guards.sessionCookies],
      handler: async ({ body, req }) => {
        const user = await otps.verifyEmail(body.email, body.otp, sessionOf(req), requestFacts(req));
        return { status: true as const, token: null, user: publicUser(user) };
      },
    }),
    defineRoute({
      method: "post",
      path: path("/email-otp/reset-password"),
      tag: TAG,
      summary: "Set a new password with a reset code: every session of the account ends",
      body: resetPasswordOtpBody,
      response: otpSuccessResponse,
      reply: "json",
      guards: [...using, guards.passwordQueue],
      handler: async ({ body, req }) => {
        await otps.resetPassword(body.email, body.otp, body.password, requestFacts(req));
        return SUCCESS;
      },
    }),
  ];
}
