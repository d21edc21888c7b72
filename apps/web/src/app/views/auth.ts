import type { AppContext, View } from "../context.js";
import { field, h } from "../dom.js";

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A credentials form that disables itself while its request runs and shows its own error. */
function authForm(id: string, title: string, fields: HTMLElement[], submit: (form: HTMLFormElement) => Promise<void>): HTMLElement {
  const error = h("p", { class: "form-error", role: "alert" });
  const button = h("button", { type: "submit" }, title);
  const form = h("form", { id, class: "card" }, h("h2", {}, title), ...fields, button, error);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    button.disabled = true;
    error.textContent = "";
    submit(form)
      .catch((e: unknown) => {
        error.textContent = errorText(e);
      })
      .finally(() => {
        button.disabled = false;
      });
  });
  return form;
}

function input(name: string, label: string, type = "text", autocomplete = "off"): HTMLElement {
  return h("label", {}, label, h("input", { name, type, required: true, autocomplete }));
}

/**
 * Sign in and sign up. Both resolve only after the client awaited get-session and stored the
 * JWT as `authToken` (the contract's two-step login); then the task list opens.
 */
export const authView: View = (ctx: AppContext, root) => {
  const signIn = authForm(
    "signin-form",
    "Sign in",
    [input("email", "Email", "email", "username"), input("password", "Password", "password", "current-password")],
    async (form) => {
      const { user } = await ctx.client.auth.signIn({ email: field(form, "email"), password: field(form, "password") });
      ctx.signedIn(user);
    },
  );
  const signUp = authForm(
    "signup-form",
    "Sign up",
    [
      input("name", "Name", "text", "name"),
      input("email", "Email", "email", "username"),
      input("password", "Password (8+ characters)", "password", "new-password"),
    ],
    async (form) => {
      const body = { name: field(form, "name"), email: field(form, "email"), password: field(form, "password") };
      const { user } = await ctx.client.auth.signUp(body);
      ctx.signedIn(user);
    },
  );
  root.append(h("div", { class: "columns" }, signIn, signUp));
  return undefined;
};
