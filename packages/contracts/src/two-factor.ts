import { z } from "zod";
import { cleanString, PASSWORD_MAX_LENGTH, userSchema } from "./auth.js";

// The wire of second factors (TOTP, backup codes, emailed codes), as better-auth 1.7's
// `twoFactor` plugin: apps/identity/src/two-factor/. Bodies are plain objects (fields its client
// may add are ignored), answers are better-auth's.

/** The account password a two-factor change is confirmed with. */
const password = cleanString("password")
  .min(1, "password is required")
  .max(PASSWORD_MAX_LENGTH * 4, "password is too long");

/** A TOTP, emailed or backup code as typed (checked by the route, never by its shape alone). */
const code = cleanString("code").trim().min(1, "code is required").max(64, "code is too long");

/** `trustDevice`: the browser skips the second factor for 30 days (better-auth's field). */
const trustDevice = z.boolean({ error: "trustDevice must be a boolean" }).optional();

/** Body of POST /api/auth/two-factor/enable. */
export const enableTwoFactorBody = z.object({
  password,
  /** `totp` (default): an authenticator app, on once its first code verifies; `otp`: emailed codes, on at once. */
  method: z.enum(["totp", "otp"]).optional(),
  /** The issuer the authenticator app shows (default: the service's host name). */
  issuer: cleanString("issuer").trim().min(1).max(100, "issuer is too long").optional(),
});
export type EnableTwoFactorBody = z.infer<typeof enableTwoFactorBody>;

/** Answer of POST /api/auth/two-factor/enable. */
export const enableTwoFactorResponse = z.union([
  z.object({ method: z.literal("totp"), totpURI: z.string(), backupCodes: z.array(z.string()) }),
  z.object({ method: z.literal("otp") }),
]);
export type EnableTwoFactorResponse = z.infer<typeof enableTwoFactorResponse>;

/** Body of get-totp-uri, generate-backup-codes and disable: the account password. */
export const twoFactorPasswordBody = z.object({ password });

/** Answer of POST /api/auth/two-factor/get-totp-uri. */
export const totpUriResponse = z.object({ totpURI: z.string() });

/** Body of POST /api/auth/two-factor/verify-totp and verify-otp. */
export const verifyTwoFactorCodeBody = z.object({ code, trustDevice });
export type VerifyTwoFactorCodeBody = z.infer<typeof verifyTwoFactorCodeBody>;

/** Body of POST /api/auth/two-factor/verify-backup-code. */
export const verifyBackupCodeBody = z.object({
  code,
  /** Checks (and uses up) the code without opening a session. */
  disableSession: z.boolean({ error: "disableSession must be a boolean" }).optional(),
  trustDevice,
});
export type VerifyBackupCodeBody = z.infer<typeof verifyBackupCodeBody>;

/** Body of POST /api/auth/two-factor/send-otp (better-auth's client may send none). */
export const sendTwoFactorOtpBody = z.object({ trustDevice }).optional();

/**
 * Answer of the verify routes: `token` is the id of the session the request holds or opened
 * (what revoke-session takes; the cookie's secret is never in a body), null when none was
 * opened (`disableSession`).
 */
export const twoFactorVerifiedResponse = z.object({ token: z.string().nullable(), user: userSchema });
export type TwoFactorVerifiedResponse = z.infer<typeof twoFactorVerifiedResponse>;

/** Answer of POST /api/auth/two-factor/generate-backup-codes: the new codes, shown once. */
export const backupCodesResponse = z.object({ status: z.literal(true), backupCodes: z.array(z.string()) });
