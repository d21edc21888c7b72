import { PASSWORD_MIN_LENGTH } from "@app/contracts";
import { confirmAction } from "../confirm.js";
import type { AppContext, View } from "../context.js";
import { field, h } from "../dom.js";
import { formSummary, labelled, onSubmit } from "../forms.js";
import { sessionEndWords } from "../session.js";
import { linkedAccountsSection } from "./linked-accounts.js";

/** Where identity's email-change link lands (this app's origin; main.ts shows the notice). */
export function emailChangedLanding(): string {
  return `${location.origin}/?email-changed=1`;
}

/** A titled form section of the account page. */
function section(id: string, title: string, ...children: (HTMLElement | null)[]): HTMLFormElement {
  return h(
    "form",
    { id, class: "card", novalidate: true, "aria-labelledby": `${id}-title` },
    h("h2", { id: `${id}-title` }, title),
    ...children,
  );
}

function passwordInput(name: string, autocomplete: string): HTMLInputElement {
  return h("input", { name, type: "password", required: true, autocomplete });
}

function profileForm(ctx: AppContext): HTMLFormElement {
  const form = section(
    "profile-form",
    "Name",
    labelled("Name", h("input", { name: "name", type: "text", required: true, autocomplete: "name", value: ctx.user?.name ?? "" })),
    h("button", { type: "submit" }, "Save the name"),
    formSummary(),
  );
  onSubmit(form, async () => {
    const user = await ctx.client.auth.updateUser({ name: field(form, "name") });
    if (ctx.user) ctx.user.name = user.name;
    ctx.showNotice("Your name is saved.");
  });
  return form;
}

function emailForm(ctx: AppContext): HTMLFormElement {
  const form = section(
    "email-form",
    "Email address",
    h("p", { class: "muted" }, `Now: ${ctx.user?.email ?? "unknown"}`),
    labelled("New email address", h("input", { name: "newEmail", type: "email", required: true, autocomplete: "email" }), {
      hint: "We mail your current address first; once you confirm there, the new address gets a link, and the change happens when you open it.",
    }),
    h("button", { type: "submit" }, "Change the email address"),
    formSummary(),
  );
  onSubmit(form, async () => {
    const newEmail = field(form, "newEmail").trim();
    await ctx.client.auth.changeEmail({ newEmail, callbackURL: emailChangedLanding() });
    form.reset();
    // Identity mails the current address first (docs/accounts.md "Changing the email address").
    const current = ctx.user?.email ?? "your current address";
    ctx.showNotice(`Check the inbox of ${current} to confirm the change; then we mail ${newEmail}.`);
  });
  return form;
}

function passwordForm(ctx: AppContext): HTMLFormElement {
  const form = section(
    "password-form",
    "Password",
    labelled("Current password", passwordInput("currentPassword", "current-password")),
    labelled("New password", passwordInput("newPassword", "new-password"), { hint: `At least ${PASSWORD_MIN_LENGTH} characters.` }),
    h(
      "label",
      { class: "check", for: "revoke-other-sessions" },
      h("input", { type: "checkbox", name: "revokeOtherSessions", id: "revoke-other-sessions", checked: true }),
      "Sign out my other sessions",
    ),
    h("p", { class: "hint muted" }, `They end now. ${sessionEndWords(ctx.sessionRecheckSeconds).app}`),
    h("button", { type: "submit" }, "Change the password"),
    formSummary(),
  );
  onSubmit(form, async () => {
    const revokeOtherSessions = new FormData(form).has("revokeOtherSessions");
    await ctx.client.auth.changePassword({
      currentPassword: field(form, "currentPassword"),
      newPassword: field(form, "newPassword"),
      revokeOtherSessions,
    });
    form.reset();
    ctx.showNotice(
      revokeOtherSessions
        ? `Your password is changed, and your other sessions are signed out. ${sessionEndWords(ctx.sessionRecheckSeconds).app}`
        : "Your password is changed.",
    );
  });
  return form;
}

function deleteForm(ctx: AppContext): HTMLFormElement {
  const form = section(
    "delete-form",
    "Delete the account",
    h(
      "p",
      { class: "muted" },
      `Your account, tasks, uploads and sessions are deleted for good. ${sessionEndWords(ctx.sessionRecheckSeconds).app}`,
    ),
    labelled("Password", passwordInput("password", "current-password"), { hint: "Enter your password to confirm it is you." }),
    h("button", { type: "submit", class: "danger" }, "Delete my account"),
    formSummary(),
  );
  onSubmit(form, async () => {
    if (!(await confirmAction("Delete your account?", "Delete account"))) return;
    // The user is cleared first, so a session check finishing meanwhile does not report an ended session.
    const user = ctx.user;
    ctx.user = null;
    try {
      await ctx.client.auth.deleteUser({ password: field(form, "password") });
    } catch (error) {
      ctx.user = user;
      throw error;
    }
    ctx.signedOut("Your account is deleted.");
  });
  return form;
}

/**
 * Account settings: name, email address (confirmed from the current inbox, then the new one),
 * linked sign-in methods, password, deletion; links to the sessions, security and authorized apps pages.
 */
export const accountView: View = (ctx, root) => {
  const linked = linkedAccountsSection(ctx);
  root.append(
    h("h1", {}, "Account"),
    h(
      "p",
      { class: "inline" },
      h("a", { href: "#/sessions", id: "account-sessions-link" }, "Where you are signed in"),
      h("a", { href: "#/security", id: "account-security-link" }, "Security: two-factor authentication and passkeys"),
      h("a", { href: "#/authorized-apps", id: "account-apps-link" }, "Authorized apps"),
      h("a", { href: "#/activity", id: "account-activity-link" }, "Security activity"),
    ),
    h("div", { class: "columns" }, profileForm(ctx), emailForm(ctx)),
    linked.element,
    passwordForm(ctx),
    deleteForm(ctx),
    h("p", { class: "muted", id: "token-words" }, sessionEndWords(ctx.sessionRecheckSeconds).token),
  );
  return linked.stop;
};
