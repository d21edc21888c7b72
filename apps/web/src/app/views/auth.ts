import { PASSWORD_MIN_LENGTH } from "@app/contracts";
import { authorizationWaiting } from "../authorization-return.js";
import type { AppContext, View } from "../context.js";
import { field, h, replace } from "../dom.js";
import { formSummary, labelled, onSubmit } from "../forms.js";
import { verifiedLanding } from "../verify-banner.js";
import { finishSignIn, signInOptions } from "./sign-in-options.js";

function input(name: string, type: string, autocomplete: string): HTMLInputElement {
  return h("input", { name, type, required: true, autocomplete });
}

/**
 * What the sign-in forms say for codes whose general sentence would mislead here: without a
 * readable `set-auth-jwt` (packages/client/src/auth.ts) the sign-in cannot finish, and only
 * whoever runs the service can fix it.
 */
const SIGN_IN_SENTENCES: Record<string, string> = {
  missing_token:
    "Signing in could not finish: the service does not let this site read the sign-in token. Whoever runs the service must list set-auth-jwt among its exposed CORS headers.",
};

/** What the sign-up card says when the service mails a link instead of signing the user in. */
export function checkInboxSentence(email: string): string {
  return `Check your inbox: we sent a link to ${email} to confirm your address. Follow it, then sign in.`;
}

/**
 * The card that takes the sign-up form's place when sign-up answers `verify_email`
 * (REQUIRE_EMAIL_VERIFICATION, packages/client/src/auth.ts): the link lands on `?verified=1`
 * (verify-banner.ts), where the sign-in form beside it finishes the job.
 */
function checkInboxCard(email: string): HTMLElement {
  const heading = h("h2", { id: "check-inbox-title", tabindex: -1 }, "Check your inbox");
  const card = h(
    "section",
    { id: "check-inbox", class: "card", role: "status", "aria-labelledby": "check-inbox-title" },
    heading,
    h("p", { id: "check-inbox-text" }, checkInboxSentence(email)),
  );
  queueMicrotask(() => heading.focus());
  return card;
}

/** A credentials form: labelled fields, problems shown next to them (see forms.ts). */
function authForm(
  id: string,
  title: string,
  fields: HTMLElement[],
  submit: (form: HTMLFormElement) => Promise<void>,
  footer: HTMLElement | null = null,
): HTMLFormElement {
  const headingId = `${id}-title`;
  const form = h(
    "form",
    { id, class: "card", "aria-labelledby": headingId, novalidate: true },
    h("h2", { id: headingId }, title),
    ...fields,
    h("button", { type: "submit" }, title),
    formSummary(),
    footer,
  );
  onSubmit(form, () => submit(form), SIGN_IN_SENTENCES);
  return form;
}

/**
 * Fills the `#auth-providers` slot with one "Continue with {name}" button per provider identity
 * offers (`GET /api/auth/providers`); it stays hidden when there are none or the list fails. A
 * click starts the flow (identity sets its flow cookie) and sends this window to the provider.
 */
function providerButtons(ctx: AppContext, slot: HTMLElement): void {
  ctx.client.auth
    .providers()
    .then((providers) => {
      if (!providers.length || !slot.isConnected) return;
      const buttons = providers.map((provider) => {
        const button = h(
          "button",
          { type: "button", class: "secondary provider-button", "data-provider": provider.id },
          `Continue with ${provider.name}`,
        );
        button.addEventListener("click", () => {
          button.disabled = true;
          ctx.client.auth
            .signInSocial({
              provider: provider.id,
              callbackURL: `${location.origin}/?signedIn=${encodeURIComponent(provider.id)}`,
              errorCallbackURL: `${location.origin}/?authError=1`,
            })
            .then((url) => location.assign(url))
            .catch((e: unknown) => {
              button.disabled = false;
              ctx.showError(e);
            });
        });
        return button;
      });
      replace(slot, h("h2", { id: "auth-providers-title", class: "visually-hidden" }, "Sign in with a provider"), ...buttons);
      slot.setAttribute("aria-labelledby", "auth-providers-title");
      // The card's `display: flex` would override `hidden`: the slot becomes a card only when shown.
      slot.className = "card inline providers";
      slot.hidden = false;
    })
    .catch(() => undefined); // email sign-in still works; the buttons are an extra
}

/**
 * Sign in and sign up. Both resolve only after the client awaited get-session and stored the
 * JWT as `authToken` (the contract's two-step login); then the task list opens. A sign-up that
 * signed nobody in (the service requires a verified address) shows {@link checkInboxCard}. The forms are
 * `novalidate` so the service's own field messages show, the same in every browser.
 */
export const authView: View = (ctx: AppContext, root) => {
  const signIn = authForm(
    "signin-form",
    "Sign in",
    // "webauthn": the browser may offer the account's passkeys among the field's suggestions.
    [
      labelled("Email", input("email", "email", "username webauthn")),
      labelled("Password", input("password", "password", "current-password")),
    ],
    async (form) => {
      // With REQUIRE_EMAIL_VERIFICATION, an unverified sign-in mails a new link that comes back here.
      const body = { email: field(form, "email"), password: field(form, "password"), callbackURL: verifiedLanding() };
      finishSignIn(ctx, await ctx.client.auth.signIn(body));
    },
    h("p", { class: "form-footer" }, h("a", { href: "#/forgot-password", id: "forgot-password-link" }, "Forgot password?")),
  );
  const signUp = authForm(
    "signup-form",
    "Sign up",
    [
      labelled("Name", input("name", "text", "name")),
      labelled("Email", input("email", "email", "username")),
      labelled("Password", input("password", "password", "new-password"), { hint: `At least ${PASSWORD_MIN_LENGTH} characters.` }),
    ],
    async (form) => {
      // The verification mail's link comes back to this app, which then says "verified".
      const body = {
        name: field(form, "name"),
        email: field(form, "email"),
        password: field(form, "password"),
        callbackURL: verifiedLanding(),
      };
      const result = await ctx.client.auth.signUp(body);
      if (result.status === "signed_in") {
        ctx.signedIn(result.user);
        return;
      }
      const email = signIn.querySelector<HTMLInputElement>("input[name=email]");
      if (email) email.value = result.user.email;
      signUp.replaceWith(checkInboxCard(result.user.email));
    },
  );
  // Sign-in with other providers ("Continue with …" buttons) goes here, above both forms.
  const providers = h("section", { id: "auth-providers", class: "providers", hidden: true });
  providerButtons(ctx, providers);
  // A passkey, a mailed link or a mailed code, below the password; the code's form opens beside.
  const codeSlot = h("div", { id: "email-code-slot" });
  const options = signInOptions(ctx, signIn, codeSlot);
  signIn.append(options.element);
  root.append(h("h1", { class: "visually-hidden" }, "Welcome"));
  // An app's authorization request sent the browser here (authorization-return.ts): say why.
  if (authorizationWaiting()) {
    root.append(
      h(
        "p",
        { id: "authorization-sign-in", class: "notice" },
        "An app asks to connect to your account. Sign in, or create an account, to continue; then you choose what it may do.",
      ),
    );
  }
  root.append(providers, codeSlot, h("div", { class: "columns" }, signIn, signUp));
  return options.stop;
};
