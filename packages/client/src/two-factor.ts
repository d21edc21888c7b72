import {
  backupCodesResponse,
  enableTwoFactorResponse,
  sessionResponse,
  statusResponse,
  totpUriResponse,
  twoFactorVerifiedResponse,
} from "@app/contracts";
import { ApiError } from "./errors.js";
import type { Http } from "./http.js";
import { completeSignIn, identityJson, type SignedIn } from "./sign-in.js";

/** What setting up an authenticator app hands out, once. */
export interface TotpSetup {
  /** `otpauth://totp/…`: shown as a QR code, its `secret` parameter as text. */
  totpURI: string;
  /** One-time backup codes: shown once, for the user to keep. */
  backupCodes: string[];
}

/** A code that finishes a pending sign-in (or confirms the authenticator app while signed in). */
export interface VerifyCodeBody {
  code: string;
  /** Skip the second factor on this browser for a while (identity sets a trusted-device cookie). */
  trustDevice?: boolean;
}

/**
 * Two-factor authentication (better-auth's `twoFactor` wire, apps/identity/src/two-factor/).
 * Setting up, regenerating and turning off need the signed-in session and the password; the
 * verify calls finish a sign-in that answered `two_factor` (the pending cookie it set) and then
 * run step 2, storing the JWT.
 */
export interface TwoFactorApi {
  /**
   * Whether the signed-in user has two-factor authentication on (GET get-session's
   * `user.twoFactorEnabled`); null without a session, or when the service does not say.
   */
  enabled(): Promise<boolean | null>;
  /**
   * Starts setting up an authenticator app: the `otpauth://` URI and backup codes. Two-factor is
   * on once the first code from the app is confirmed with {@link verifyTotp}.
   */
  enable(body: { password: string; issuer?: string }): Promise<TotpSetup>;
  /**
   * Turns on emailed codes as the second factor, at once: a pending sign-in then asks for a code
   * mailed with {@link sendOtp}. (The web app sets up an authenticator app instead.)
   */
  enableEmailCodes(body: { password: string }): Promise<void>;
  /** The `otpauth://` URI of the app already set up (to add it to another device). */
  getTotpUri(body: { password: string }): Promise<string>;
  /**
   * Checks a code from the authenticator app: finishes a pending sign-in, or, signed in, confirms
   * the setup and turns two-factor on. Either way the session is then read (step 2).
   */
  verifyTotp(body: VerifyCodeBody): Promise<SignedIn>;
  /** Mails a one-time code to the account of the pending sign-in. */
  sendOtp(body?: { trustDevice?: boolean }): Promise<void>;
  /** Finishes a pending sign-in with the mailed code. */
  verifyOtp(body: VerifyCodeBody): Promise<SignedIn>;
  /** Finishes a pending sign-in with a backup code (each works once). */
  verifyBackupCode(body: VerifyCodeBody): Promise<SignedIn>;
  /** New backup codes; the old ones stop working. */
  generateBackupCodes(body: { password: string }): Promise<string[]>;
  /** Turns two-factor off (the secret and backup codes are deleted). */
  disable(body: { password: string }): Promise<void>;
}

/** Builds the {@link TwoFactorApi} over a transport. */
export function twoFactorApi(http: Http): TwoFactorApi {
  const verify = async (path: string, body: VerifyCodeBody): Promise<SignedIn> => {
    await identityJson(http, twoFactorVerifiedResponse, path, { body });
    return completeSignIn(http);
  };
  /** A change of the user's two-factor state: the next JWT and session answer carry it. */
  const changed = () => http.refresh().catch(() => undefined);
  return {
    enabled: async () => (await identityJson(http, sessionResponse.nullable(), "/get-session"))?.user.twoFactorEnabled ?? null,
    enable: async ({ password, issuer }) => {
      const answer = await identityJson(http, enableTwoFactorResponse, "/two-factor/enable", {
        body: { password, method: "totp", ...(issuer ? { issuer } : {}) },
      });
      if (answer.method !== "totp") throw new ApiError(200, "invalid_response", "enable answered without a TOTP URI");
      return { totpURI: answer.totpURI, backupCodes: answer.backupCodes };
    },
    enableEmailCodes: async ({ password }) => {
      await identityJson(http, enableTwoFactorResponse, "/two-factor/enable", { body: { password, method: "otp" } });
      await changed();
    },
    getTotpUri: async (body) => (await identityJson(http, totpUriResponse, "/two-factor/get-totp-uri", { body })).totpURI,
    verifyTotp: (body) => verify("/two-factor/verify-totp", body),
    sendOtp: async (body = {}) => {
      await identityJson(http, statusResponse, "/two-factor/send-otp", { body });
    },
    verifyOtp: (body) => verify("/two-factor/verify-otp", body),
    verifyBackupCode: (body) => verify("/two-factor/verify-backup-code", body),
    generateBackupCodes: async (body) =>
      (await identityJson(http, backupCodesResponse, "/two-factor/generate-backup-codes", { body })).backupCodes,
    disable: async (body) => {
      await identityJson(http, statusResponse, "/two-factor/disable", { body });
      await changed();
    },
  };
}
