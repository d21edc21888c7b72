import { z } from "zod";
import {
  callbackUrlSchema,
  cleanString,
  emailSchema,
  imageSchema,
  nameSchema,
  passwordSchema,
  signInResponse,
  userSchema,
} from "./auth.js";

// The wire of sign-in by mail, as better-auth 1.7's `magicLink` and `emailOTP` plugins (paths,
// bodies and answers), so their official clients work unchanged: apps/identity/src/passwordless/.
// Bodies are plain objects: a field better-auth's client may also send is ignored, not refused.

/** Digits of an emailed code. */
export const EMAIL_OTP_LENGTH = 6;
/** How long an emailed code or a magic link works. */
export const PASSWORDLESS_TTL_MS = 5 * 60 * 1000;
/** Tries of one emailed code; the next answers `too_many_attempts`, and a new code is needed. */
export const EMAIL_OTP_ATTEMPTS = 3;

/** A display name for a new account, or none (better-auth's client may send an empty one). */
const newUserName = z.union([z.literal("").transform(() => undefined), nameSchema]).optional();

/** A magic link's token as it comes back (a bad one is an invalid link, not a 400 of its own). */
export const magicLinkTokenSchema = cleanString("token").max(512, "token is too long");

/** Body of POST /api/auth/sign-in/magic-link (better-auth's `signIn.magicLink`). */
export const signInMagicLinkBody = z.object({
  email: emailSchema,
  name: newUserName,
  callbackURL: callbackUrlSchema.optional(),
  newUserCallbackURL: callbackUrlSchema.optional(),
  errorCallbackURL: callbackUrlSchema.optional(),
  /** Passed to better-auth's `sendMagicLink` hook there; identity has none and ignores it. */
  metadata: z.record(z.string(), z.unknown()).optional(),
});
export type SignInMagicLinkBody = z.infer<typeof signInMagicLinkBody>;

/** The callbacks a magic link carries (in its query, or the one-click page's form action). */
const magicLinkCallbacks = {
  callbackURL: callbackUrlSchema.optional(),
  newUserCallbackURL: callbackUrlSchema.optional(),
  errorCallbackURL: callbackUrlSchema.optional(),
};

/** Query of GET /api/auth/magic-link/verify: the mailed link (better-auth's `magicLink.verify`). */
export const magicLinkVerifyQuery = z.object({ token: magicLinkTokenSchema, ...magicLinkCallbacks });
export type MagicLinkVerifyQuery = z.infer<typeof magicLinkVerifyQuery>;

/** Query of POST /api/auth/magic-link/verify: the one-click page's form action carries all of it. */
export const magicLinkConfirmQuery = z.object({ token: magicLinkTokenSchema.optional(), ...magicLinkCallbacks });
/** Body of POST /api/auth/magic-link/verify from a script (the page's form posts none). */
export const magicLinkConfirmBody = z.object({ token: magicLinkTokenSchema.optional(), ...magicLinkCallbacks });

/** What an emailed code is for (better-auth's types but `change-email`, which identity does not send). */
export const emailOtpType = z.enum(["sign-in", "email-verification", "forget-password"]);
export type EmailOtpType = z.infer<typeof emailOtpType>;

/** An emailed code as typed (a wrong one spends a try; only its HMAC is stored). */
export const emailOtpSchema = cleanString("otp").trim().min(1, "otp is required").max(64, "otp is too long");

/** Body of POST /api/auth/email-otp/send-verification-otp. */
export const sendVerificationOtpBody = z.object({ email: emailSchema, type: emailOtpType });
/** Body of POST /api/auth/email-otp/request-password-reset and the older /forget-password/email-otp. */
export const requestPasswordResetOtpBody = z.object({ email: emailSchema });
/** Body of POST /api/auth/email-otp/check-verification-otp: checks a code without using it. */
export const checkVerificationOtpBody = z.object({ email: emailSchema, type: emailOtpType, otp: emailOtpSchema });
/** Body of POST /api/auth/sign-in/email-otp (`name` and `image` only for a new account). */
export const signInEmailOtpBody = z.object({ email: emailSchema, otp: emailOtpSchema, name: newUserName, image: imageSchema.optional() });
export type SignInEmailOtpBody = z.infer<typeof signInEmailOtpBody>;
/** Body of POST /api/auth/email-otp/verify-email. */
export const verifyEmailOtpBody = z.object({ email: emailSchema, otp: emailOtpSchema });
/** Body of POST /api/auth/email-otp/reset-password. */
export const resetPasswordOtpBody = z.object({ email: emailSchema, otp: emailOtpSchema, password: passwordSchema });

/** Answer of POST sign-in/magic-link, for every valid address. */
export const magicLinkSentResponse = z.object({ status: z.literal(true) });
/** Answer of the emailed-code routes that send, check or reset (better-auth's `{success: true}`). */
export const otpSuccessResponse = z.object({ success: z.literal(true) });

/**
 * Answer of a sign-in by mail, as sign-in/email answers: the session and its user (the session
 * cookie is set; its secret stays in the HttpOnly cookie), or better-auth's
 * `{twoFactorRedirect: true, twoFactorMethods}` when the account waits for a second factor.
 */
export const passwordlessSignInResponse = signInResponse;
export type PasswordlessSignInResponse = z.input<typeof passwordlessSignInResponse>;

/** Answer of POST /api/auth/email-otp/verify-email: better-auth's, signing nobody in (`token: null`). */
export const verifyEmailOtpResponse = z.object({ status: z.literal(true), token: z.null(), user: userSchema });
