import { ApiError } from "@app/client";
import type { AppContext } from "./context.js";
import { h, replace } from "./dom.js";
import { ProviderSignInError } from "./messages.js";
import { ACCEPT_INVITATION_PATH } from "./router.js";

/**
 * Where identity's verification link lands: this app's origin with `?verified=1`, or, asked from
 * an invitation's page, that page (whose invitation needs a verified address to be answered).
 */
export function verifiedLanding(hash: string = location.hash): string {
  const invitation = /^#\/accept-invitation\/([^/?#]+)$/.exec(hash)?.[1];
  return `${location.origin}${invitation ? `${ACCEPT_INVITATION_PATH}/${invitation}` : "/"}?verified=1`;
}

/**
 * The "check your inbox" banner, shown while the signed-in user's address is not verified
 * (`emailVerified` from get-session), with a button that mails a new link.
 */
export function renderVerifyBanner(ctx: AppContext, banner: HTMLElement): void {
  const user = ctx.user;
  // An admin acting as the user has no inbox of theirs to check.
  if (!user?.email || user.emailVerified !== false || ctx.impersonatedBy) {
    replace(banner);
    banner.hidden = true;
    return;
  }
  const email = user.email;
  const resend = h("button", { type: "button", id: "resend-verification", class: "secondary small" }, "Resend the email");
  resend.addEventListener("click", () => {
    resend.disabled = true;
    ctx.client.auth
      .sendVerificationEmail({ email, callbackURL: verifiedLanding() })
      .then(() => ctx.showNotice(`A new link is on its way to ${email}.`))
      .catch((e: unknown) => ctx.showError(e))
      .finally(() => {
        resend.disabled = false;
      });
  });
  replace(banner, h("p", { class: "banner-text" }, `Check your inbox to verify your email address: we sent a link to ${email}.`), resend);
  banner.hidden = false;
}

/**
 * What a page reached from identity's redirect says. A mailed link carries `?verified=1`,
 * `?email-changed=1` or `?error=`; a provider sign-in (views/auth.ts sends the URLs) comes back
 * with `?signedIn=<provider>`, where the session cookie exists but no JWT yet, or with
 * `?authError=1&error=<code>`.
 */
export function landingMessage(search: string): { notice?: string; error?: ApiError | ProviderSignInError; provider?: string } {
  const query = new URLSearchParams(search);
  const error = query.get("error");
  if (query.get("authError") === "1") return { error: new ProviderSignInError(error ?? "server_error") };
  const provider = query.get("signedIn");
  if (provider) return { provider };
  if (error === "EMAIL_TAKEN") return { error: new ApiError(409, "email_taken", "the new address belongs to another account") };
  if (error) return { error: new ApiError(400, "invalid_token", "the link is invalid or has expired") };
  if (query.get("verified") === "1") return { notice: "Your email address is verified." };
  if (query.get("email-changed") === "1") return { notice: "Your email address is changed." };
  return {};
}
