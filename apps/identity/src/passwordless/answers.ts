import type { PasswordlessSignInResponse } from "@app/contracts";
import type { Finished } from "../sign-in/finish.js";
import { publicSession, publicUser } from "../views/public.js";

/**
 * The JSON answer of a sign-in by mail: the session and its user, or, when the account asks for a
 * second factor (sign-in/finish.ts), better-auth's `{twoFactorRedirect: true}` with the methods
 * the finisher names, which its client's twoFactor plugin acts on.
 */
export function signInAnswer(finished: Finished): PasswordlessSignInResponse {
  if (finished.kind === "two-factor") {
    const methods = (finished as { twoFactorMethods?: unknown }).twoFactorMethods;
    return { twoFactorRedirect: true, ...(Array.isArray(methods) ? { twoFactorMethods: methods.map(String) } : {}) };
  }
  return { session: publicSession(finished.session), user: publicUser(finished.user) };
}
