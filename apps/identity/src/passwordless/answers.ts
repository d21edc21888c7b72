import type { PasswordlessSignInResponse } from "@app/contracts";
import type { Finished } from "../sign-in/finish.js";
import { publicSession, publicUser } from "../views/public.js";

/**
 * The JSON answer of a sign-in by mail: the session and its user, or, when the account asks for a
 * second factor (sign-in/finish.ts), better-auth's `{twoFactorRedirect: true, twoFactorMethods}`,
 * which its client's twoFactor plugin acts on.
 */
export function signInAnswer(finished: Finished): PasswordlessSignInResponse {
  if (finished.kind === "two-factor") return { twoFactorRedirect: true, twoFactorMethods: finished.methods };
  return { session: publicSession(finished.session), user: publicUser(finished.user) };
}
