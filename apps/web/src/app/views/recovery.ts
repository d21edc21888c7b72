import { PASSWORD_MIN_LENGTH } from "@app/contracts";
import type { View } from "../context.js";
import { field, h, replace } from "../dom.js";
import { formSummary, labelled, onSubmit } from "../forms.js";
import { sentenceFor } from "../messages.js";
import { sessionEndWords } from "../session.js";

/** Where identity's reset link lands: this app's own origin (a CORS origin identity trusts). */
export function resetLanding(): string {
  return `${location.origin}/reset-password`;
}

const backToSignIn = () => h("p", {}, h("a", { href: "#/signin", id: "back-to-signin" }, "Back to sign in"));

/**
 * Forgot password: asks for the address and always answers "check your inbox" (identity answers
 * the same for unknown addresses, so the page does too and reveals nothing).
 */
export const forgotPasswordView: View = (ctx, root) => {
  const card = h("section", { class: "card", "aria-labelledby": "forgot-title" });
  const form = h(
    "form",
    { id: "forgot-form", novalidate: true, class: "stack" },
    labelled("Email", h("input", { name: "email", type: "email", required: true, autocomplete: "username" })),
    h("button", { type: "submit" }, "Send the reset link"),
    formSummary(),
  );
  onSubmit(form, async () => {
    const email = field(form, "email");
    await ctx.client.auth.requestPasswordReset({ email, redirectTo: resetLanding() });
    replace(
      card,
      h("h2", { id: "forgot-title" }, "Check your inbox"),
      h(
        "p",
        { id: "forgot-sent", role: "status" },
        `If an account uses ${email.trim()}, a link to choose a new password is on its way. It works once, for one hour.`,
      ),
    );
  });
  replace(
    card,
    h("h2", { id: "forgot-title" }, "Forgot your password?"),
    h("p", { class: "muted" }, "Enter the email address of your account and we will send you a link to choose a new password."),
    form,
  );
  root.append(h("h1", {}, "Reset your password"), card, backToSignIn());
  return undefined;
};

/**
 * Reset password: the page identity's mailed link redirects to (`?token=…`, or
 * `?error=INVALID_TOKEN` for a used or expired link). A new password ends every session, so the
 * sign-in page comes next; this app on other devices finds out at its next session check.
 */
export const resetPasswordView: View = (ctx, root, params) => {
  const token = params.token;
  const words = sessionEndWords(ctx.sessionRecheckSeconds);
  if (!token || params.error) {
    root.append(
      h("h1", {}, "Reset your password"),
      h(
        "section",
        { class: "card", id: "reset-invalid" },
        h("h2", {}, "This link does not work"),
        h("p", {}, sentenceFor("invalid_token")),
        h("p", {}, h("a", { href: "#/forgot-password" }, "Ask for a new link")),
      ),
    );
    return undefined;
  }
  const form = h(
    "form",
    { id: "reset-form", class: "card", novalidate: true, "aria-labelledby": "reset-title" },
    h("h2", { id: "reset-title" }, "Choose a new password"),
    labelled("New password", h("input", { name: "newPassword", type: "password", required: true, autocomplete: "new-password" }), {
      hint: `At least ${PASSWORD_MIN_LENGTH} characters. Every session of your account ends, this browser's too. ${words.app}`,
    }),
    h("p", { class: "muted", id: "token-words" }, words.token),
    h("button", { type: "submit" }, "Set the new password"),
    formSummary(),
  );
  onSubmit(form, async () => {
    await ctx.client.auth.resetPassword({ newPassword: field(form, "newPassword"), token });
    // The reset ended every session, this browser's too (when the link was opened signed in).
    ctx.signedOut("Your password is changed. Sign in with the new one.");
  });
  root.append(h("h1", {}, "Reset your password"), form);
  return undefined;
};
