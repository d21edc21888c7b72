import { magicLinkSentResponse, otpSuccessResponse, passwordlessSignInResponse } from "@app/contracts";
import type { Http } from "./http.js";
import { identityCall, identityJson, type SignInResult, signInAnswer } from "./sign-in.js";

/** What {@link PasswordlessApi.magicLink} sends. */
export interface MagicLinkOptions {
  email: string;
  /** Where the link lands signed in (an origin the service trusts). */
  callbackURL: string;
  /** Where a link that created the account lands (default: `callbackURL`). */
  newUserCallbackURL?: string;
  /** Where a spent or expired link lands, with `?error=<code>`. */
  errorCallbackURL?: string;
  /** The name of an account the link creates. */
  name?: string;
}

/**
 * Sign-in by mail (better-auth's `magicLink` and `emailOTP` wire, apps/identity/src/passwordless/).
 * Both mail routes answer the same whatever the address, so they tell nobody whether it has an
 * account.
 */
export interface PasswordlessApi {
  /**
   * Mails a sign-in link. Opened, it sets the session cookie and lands on `callbackURL`, or on the
   * web app's second-factor page when the account needs one; there, get-session is step 2.
   */
  magicLink(options: MagicLinkOptions): Promise<void>;
  /** Mails a one-time sign-in code to `email`. */
  sendEmailOtp(body: { email: string }): Promise<void>;
  /** Signs in with the mailed code; `two_factor` when the account needs a second factor too. */
  signInEmailOtp(body: { email: string; otp: string }): Promise<SignInResult>;
}

/** Builds the {@link PasswordlessApi} over a transport. */
export function passwordlessApi(http: Http): PasswordlessApi {
  return {
    magicLink: async (options) => {
      const body = Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined));
      await identityJson(http, magicLinkSentResponse, "/sign-in/magic-link", { body });
    },
    sendEmailOtp: async ({ email }) => {
      await identityJson(http, otpSuccessResponse, "/email-otp/send-verification-otp", { body: { email, type: "sign-in" } });
    },
    signInEmailOtp: async ({ email, otp }) =>
      signInAnswer(http, await identityCall(http, "/sign-in/email-otp", { body: { email, otp } }), passwordlessSignInResponse),
  };
}
