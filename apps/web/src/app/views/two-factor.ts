import type { SignedIn } from "@app/client";
import type { AppContext, View } from "../context.js";
import { field, h } from "../dom.js";
import { clearIssues, formSummary, labelled, onSubmit, showIssues } from "../forms.js";

/** Which code the second-factor form takes. */
type Mode = "totp" | "backup" | "otp";

const LABELS: Record<Mode, { label: string; hint: string }> = {
  totp: { label: "Code from your authenticator app", hint: "The 6-digit code the app shows now." },
  backup: { label: "Backup code", hint: "One of the codes you saved when you set up two-factor authentication. Each works once." },
  otp: { label: "Code from the email", hint: "The code we just mailed you." },
};

/**
 * The second step of a sign-in for an account with two-factor authentication on: the password,
 * a magic link, a mailed code or a provider opened no session yet, only a pending one (a cookie
 * that lasts minutes). A code from the authenticator app, a backup code, or a code mailed on
 * request finishes it; "Trust this device" skips the step here for a while. Every callback a
 * redirecting sign-in names is this app's start, so the page then opens the signed-in app itself.
 */
export const twoFactorView: View = (ctx: AppContext, root) => {
  let mode: Mode = "totp";
  const code = h("input", {
    name: "code",
    type: "text",
    required: true,
    autocomplete: "one-time-code",
    inputmode: "numeric",
    maxlength: 32,
  });
  const codeField = labelled(LABELS.totp.label, code, { hint: LABELS.totp.hint });
  const label = codeField.querySelector("label") as HTMLLabelElement;
  const hint = codeField.querySelector(".hint") as HTMLElement;
  const trust = h("input", { type: "checkbox", name: "trustDevice", id: "trust-device" });
  const backup = h("button", { type: "button", class: "secondary", id: "use-backup-code" }, "Use a backup code");
  const mail = h("button", { type: "button", class: "secondary", id: "email-code-instead" }, "Email me a code instead");
  const heading = h("h1", { id: "two-factor-title", tabindex: -1 }, "Two-factor authentication");
  const form = h(
    "form",
    { id: "two-factor-form", class: "card", novalidate: true, "aria-labelledby": "two-factor-title" },
    h("p", {}, "Your password or link was right. To finish signing in, enter a second code."),
    codeField,
    h("label", { class: "check", for: "trust-device" }, trust, "Trust this device for 30 days"),
    h("p", { class: "hint muted" }, "Only on a device that is yours alone: here, signing in then needs no second code."),
    h("button", { type: "submit" }, "Verify"),
    formSummary(),
    h("div", { class: "inline" }, backup, mail),
    h("p", { class: "form-footer" }, h("a", { href: "#/signin", id: "two-factor-back" }, "Back to sign in")),
  );

  const setMode = (next: Mode) => {
    mode = next;
    label.textContent = LABELS[next].label;
    hint.textContent = LABELS[next].hint;
    code.value = "";
    code.inputMode = next === "backup" ? "text" : "numeric";
    backup.textContent = next === "backup" ? "Use a code from the app" : "Use a backup code";
    clearIssues(form);
    code.focus();
  };
  backup.addEventListener("click", () => setMode(mode === "backup" ? "totp" : "backup"));
  mail.addEventListener("click", () => {
    mail.disabled = true;
    clearIssues(form);
    ctx.client.auth.twoFactor
      .sendOtp()
      .then(() => {
        setMode("otp");
        ctx.showNotice("We mailed you a code. It works for a few minutes.");
      })
      .catch((e: unknown) => showIssues(form, e))
      .finally(() => {
        mail.disabled = false;
      });
  });

  onSubmit(form, async () => {
    const body = { code: field(form, "code").trim(), trustDevice: trust.checked };
    const factor = ctx.client.auth.twoFactor;
    const signedIn: SignedIn =
      mode === "backup"
        ? await factor.verifyBackupCode(body)
        : mode === "otp"
          ? await factor.verifyOtp(body)
          : await factor.verifyTotp(body);
    ctx.signedIn(signedIn.user);
  });

  root.append(heading, form);
  queueMicrotask(() => code.focus());
  return undefined;
};
