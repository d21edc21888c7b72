import { z } from "zod";
import {
  callbackUrlSchema,
  cleanString,
  emailSchema,
  imageSchema,
  nameSchema,
  PASSWORD_MAX_LENGTH,
  passwordSchema,
  userSchema,
} from "./auth.js";

// Bodies and answers of the account lifecycle routes under /api/auth (docs/accounts.md). Paths,
// field names and answers follow better-auth's, so its client (`better-auth/client`) works.

/** A password being checked (not set): any length up to the hashing bound. */
const currentPasswordSchema = cleanString("password")
  .min(1, "password is required")
  .max(PASSWORD_MAX_LENGTH * 4, "password is too long");

/** A mailed token as it arrives in a link. */
export const mailTokenSchema = cleanString("token").min(1, "token is required").max(200, "token is too long");

/** POST /api/auth/request-password-reset. */
export const requestPasswordResetBody = z.strictObject({ email: emailSchema, redirectTo: callbackUrlSchema.optional() });
export type RequestPasswordResetBody = z.infer<typeof requestPasswordResetBody>;

/** POST /api/auth/reset-password (the token may also come as `?token=`). */
export const resetPasswordBody = z.strictObject({ newPassword: passwordSchema, token: mailTokenSchema.optional() });
export type ResetPasswordBody = z.infer<typeof resetPasswordBody>;

/** Query of GET /api/auth/reset-password/:token. */
export const resetPasswordLinkQuery = z.object({ callbackURL: callbackUrlSchema.optional() });

/** POST /api/auth/send-verification-email. */
export const sendVerificationEmailBody = z.strictObject({ email: emailSchema, callbackURL: callbackUrlSchema.optional() });
export type SendVerificationEmailBody = z.infer<typeof sendVerificationEmailBody>;

/** Query of GET /api/auth/verify-email. */
export const verifyEmailQuery = z.object({ token: mailTokenSchema, callbackURL: callbackUrlSchema.optional() });

/**
 * POST /api/auth/verify-email, the click of the link's confirmation page: the token and
 * callbackURL come in the query (the page's form) or the body; `password`, when the clicker
 * types the account's, keeps it (docs/accounts.md).
 */
export const verifyEmailConfirmQuery = z.object({ token: mailTokenSchema.optional(), callbackURL: callbackUrlSchema.optional() });
export const verifyEmailConfirmBody = z.strictObject({
  token: mailTokenSchema.optional(),
  callbackURL: callbackUrlSchema.optional(),
  password: currentPasswordSchema.optional(),
});
export type VerifyEmailConfirmBody = z.infer<typeof verifyEmailConfirmBody>;

/** POST /api/auth/change-password. */
export const changePasswordBody = z.strictObject({
  currentPassword: currentPasswordSchema,
  newPassword: passwordSchema,
  revokeOtherSessions: z.boolean().optional(),
});
export type ChangePasswordBody = z.infer<typeof changePasswordBody>;

/** POST /api/auth/change-email. */
export const changeEmailBody = z.strictObject({ newEmail: emailSchema, callbackURL: callbackUrlSchema.optional() });
export type ChangeEmailBody = z.infer<typeof changeEmailBody>;

/** POST /api/auth/update-user: at least one field; `image: null` removes the image. */
export const updateUserBody = z
  .strictObject({ name: nameSchema.optional(), image: imageSchema.nullable().optional() })
  .refine((body) => body.name !== undefined || body.image !== undefined, "nothing to update: send name or image");
export type UpdateUserBody = z.infer<typeof updateUserBody>;

/**
 * POST /api/auth/revoke-session: `token`, as better-auth's client sends it (a list-sessions row's
 * `token`, which is the session's id, or a whole cookie value), or `id`.
 */
export const revokeSessionBody = z
  .strictObject({ id: cleanString("id").min(1).max(200).optional(), token: cleanString("token").min(1).max(200).optional() })
  .refine((body) => body.id !== undefined || body.token !== undefined, "send the session's id (or token)");
export type RevokeSessionBody = z.infer<typeof revokeSessionBody>;

/**
 * POST /api/auth/delete-user, as better-auth's: the account's `password`, or a fresh session
 * (DELETE_FRESH_AGE), or `token` from the mailed confirmation a stale session asks for
 * (docs/accounts.md). `callbackURL` goes into that mail's link.
 */
export const deleteUserBody = z.strictObject({
  password: currentPasswordSchema.optional(),
  token: mailTokenSchema.optional(),
  callbackURL: callbackUrlSchema.optional(),
});
export type DeleteUserBody = z.infer<typeof deleteUserBody>;

/** Query of GET /api/auth/delete-user/callback, the link of the mailed deletion confirmation. */
export const deleteUserCallbackQuery = z.object({ token: mailTokenSchema, callbackURL: callbackUrlSchema.optional() });

/**
 * POST /api/auth/update-session: the session fields a client may set (better-auth's additional
 * session fields). Here that is `userAgent`, the device label list-sessions shows, which the
 * client chose at sign-in anyway; keys not declared are ignored, as better-auth ignores them.
 */
export const updateSessionBody = z
  .object({ userAgent: cleanString("userAgent").max(512, "userAgent is too long").nullable().optional() })
  .refine((body) => body.userAgent !== undefined, "No fields to update");
export type UpdateSessionBody = z.infer<typeof updateSessionBody>;

/** The answer of the mail-sending and most state-changing routes, as better-auth's. */
export const statusResponse = z.object({ status: z.literal(true) });
export type StatusResponse = z.infer<typeof statusResponse>;

/** POST /api/auth/request-password-reset: answered alike for known and unknown addresses. */
export const requestPasswordResetResponse = statusResponse.extend({ message: z.string() });

/** POST /api/auth/update-user: the user as it is now. */
export const updateUserResponse = statusResponse.extend({ user: userSchema });

/**
 * GET and POST /api/auth/verify-email as API clients read them (a browser gets a page or a
 * redirect instead): the user, and where to go next (`redirectTo`, the callback), or, when the
 * click ended the password without a callback, the token of the reset that chooses a new one.
 */
export const verifyEmailResponse = statusResponse.extend({
  user: userSchema,
  redirectTo: z.string().optional(),
  resetToken: z.string().optional(),
});

/** A session as the session routes show it: never the cookie secret. */
export const sessionRowSchema = z.object({
  id: z.string(),
  /**
   * The handle better-auth's `revokeSession({ token })` takes: the session's id, an opaque name
   * that opens nothing (the cookie is `<id>.<secret>`; the secret is never shown).
   */
  token: z.string(),
  userId: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
  expiresAt: z.string(),
  ipAddress: z.string().nullable(),
  userAgent: z.string().nullable(),
});
export type SessionRow = z.infer<typeof sessionRowSchema>;

/** One row of GET /api/auth/list-sessions. */
export const listedSessionSchema = sessionRowSchema.extend({
  /** True for the session of the request. */
  current: z.boolean(),
});
export type ListedSession = z.infer<typeof listedSessionSchema>;
export const listSessionsResponse = z.array(listedSessionSchema);

/** POST /api/auth/update-session: the session as it is now, as better-auth answers. */
export const updateSessionResponse = z.object({ session: sessionRowSchema });

/** GET /api/auth/ok, better-auth's liveness answer. */
export const okResponse = z.object({ ok: z.literal(true) });

/** POST /api/auth/change-password: `token` is the new cookie value when other sessions were revoked. */
export const changePasswordResponse = z.object({ token: z.string().nullable(), user: z.looseObject({ id: z.string() }) });

/**
 * POST /api/auth/delete-user and GET /api/auth/delete-user/callback, as better-auth's: the account
 * is deleted, or its confirmation link was mailed.
 */
export const deleteUserResponse = z.object({ success: z.literal(true), message: z.enum(["User deleted", "Verification email sent"]) });
export type DeleteUserResponse = z.infer<typeof deleteUserResponse>;

/** GET /api/auth/token, as better-auth's JWT plugin answers. */
export const tokenResponse = z.object({ token: z.string() });
export type TokenResponse = z.infer<typeof tokenResponse>;

/** The NOTIFY channel of account deletions; the payload is {@link userDeletedEventSchema}. */
export const USER_DELETED_CHANNEL = "auth_user_deleted";
/** Payload of {@link USER_DELETED_CHANNEL}: only a trigger; the `user_deletion` rows are the truth. */
export const userDeletedEventSchema = z.object({ userId: z.string() });
export type UserDeletedEvent = z.infer<typeof userDeletedEventSchema>;
