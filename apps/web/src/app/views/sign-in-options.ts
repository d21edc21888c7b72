import "../factors.css";
import type { SignInResult } from "@app/client";
import type { AppContext } from "../context.js";
import { field, h } from "../dom.js";
import { clearIssues, formSummary, labelled, onSubmit, showIssues } from "../forms.js";
import { offerPasskeyAutofill, passkeysSupported, signInWithPasskey, wasSuperseded } from "../passkey.js";

/**
 * Where a sign-in goes once its first step answered: the signed-in app, or the second-factor
 * page (views/two-factor.ts) when the account has two-factor authentication on.
 */
export function finishSignIn(ctx: AppContext, result: SignInResult): void {
  if (result.status === "signed_in") ctx.signedIn(result.user);
  else ctx.navigate("#/two-factor");
}

/** Where a magic link lands: this app, which finds the session the link opened (main.ts). */
export function magicLinkLanding(): string {
  return `${location.origin}/`;
}

/** What the page says once a sign-in link is mailed. */
export function linkSentSentence(email: string): string {
  return `Check your inbox: we sent a sign-in link to ${email}. Open it on this device to sign in here.`;
}

/** What the page says once a sign-in code is mailed. */
export function codeSentSentence(email: string): string {
  return `We sent a sign-in code to ${email}. Enter it here.`;
}

/**
 * The sign-in code form that follows "Email me a code": the mailed code, and a way to ask for
 * another. A second factor may still follow (views/two-factor.ts).
 */
function emailCodeForm(ctx: AppContext, email: string, resend: () => Promise<void>): HTMLFormElement {
  const code = h("input", {
    name: "otp",
    type: "text",
    required: true,
    autocomplete: "one-time-code",
    inputmode: "numeric",
    maxlength: 12,
  });
  const again = h("button", { type: "button", class: "secondary", id: "email-code-resend" }, "Send a new code");
  const form = h(
    "form",
    { id: "email-code-form", class: "card", novalidate: true, "aria-labelledby": "email-code-title" },
    h("h2", { id: "email-code-title", tabindex: -1 }, "Enter the code"),
    h("p", { id: "email-code-sent", role: "status" }, codeSentSentence(email)),
    labelled("Sign-in code", code),
    h("div", { class: "inline" }, h("button", { type: "submit" }, "Sign in"), again),
    formSummary(),
  );
  again.addEventListener("click", () => {
    again.disabled = true;
    clearIssues(form);
    resend()
      .then(() => ctx.showNotice(codeSentSentence(email)))
      .catch((e: unknown) => showIssues(form, e))
      .finally(() => {
        again.disabled = false;
      });
  });
  onSubmit(form, async () => {
    finishSignIn(ctx, await ctx.client.auth.signInEmailOtp({ email, otp: field(form, "otp").trim() }));
  });
  return form;
}

/**
 * The other ways to sign in, under the password form: a passkey (also offered in the email field's
 * suggestions where the browser supports it), a mailed link, a mailed code. The mail buttons use
 * the email field of `signIn`. `codeSlot` receives the code form once a code is mailed.
 */
export function signInOptions(ctx: AppContext, signIn: HTMLFormElement, codeSlot: HTMLElement): { element: HTMLElement; stop(): void } {
  const email = () => field(signIn, "email").trim();
  const failed = (error: unknown) => showIssues(signIn, error);
  const autofill = passkeysSupported()
    ? offerPasskeyAutofill(ctx.client, (result) => finishSignIn(ctx, result), failed)
    : { ready: Promise.resolve(), stop: () => undefined };

  const passkey = h("button", { type: "button", class: "secondary", id: "passkey-sign-in" }, "Sign in with a passkey");
  passkey.hidden = !passkeysSupported();
  passkey.addEventListener("click", () => {
    passkey.disabled = true;
    clearIssues(signIn);
    // The autofill's options call must not land after this one's: identity keeps the latest challenge.
    autofill.ready
      .then(() => signInWithPasskey(ctx.client))
      .then((result) => finishSignIn(ctx, result))
      .catch((error: unknown) => {
        if (!wasSuperseded(error)) failed(error);
      })
      .finally(() => {
        passkey.disabled = false;
      });
  });

  /** Runs a mail button: the email field must hold an address first. */
  const mailButton = (id: string, text: string, send: (address: string) => Promise<void>) => {
    const button = h("button", { type: "button", class: "secondary", id }, text);
    button.addEventListener("click", () => {
      clearIssues(signIn);
      const address = email();
      if (!address) {
        const slot = signIn.querySelector<HTMLElement>('[data-issue-for="email"]');
        if (slot) slot.textContent = "Enter your email address first.";
        signIn.querySelector<HTMLInputElement>("input[name=email]")?.focus();
        return;
      }
      button.disabled = true;
      send(address)
        .catch(failed)
        .finally(() => {
          button.disabled = false;
        });
    });
    return button;
  };

  const link = mailButton("magic-link", "Email me a link", async (address) => {
    await ctx.client.auth.magicLink({ email: address, callbackURL: magicLinkLanding(), errorCallbackURL: magicLinkLanding() });
    ctx.showNotice(linkSentSentence(address));
  });
  const code = mailButton("email-code", "Email me a code", async (address) => {
    const send = () => ctx.client.auth.sendEmailOtp({ email: address });
    await send();
    const form = emailCodeForm(ctx, address, send);
    codeSlot.replaceChildren(form);
    form.querySelector<HTMLInputElement>("input[name=otp]")?.focus();
  });

  const element = h(
    "div",
    { id: "signin-options", class: "signin-options", role: "group", "aria-labelledby": "signin-options-title" },
    h("p", { id: "signin-options-title", class: "muted" }, "Or, without your password:"),
    h("div", { class: "inline" }, passkey, link, code),
  );
  return { element, stop: () => autofill.stop() };
}
