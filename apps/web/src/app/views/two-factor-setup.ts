import { confirmAction } from "../confirm.js";
import type { AppContext } from "../context.js";
import { field, h, replace } from "../dom.js";
import { formSummary, labelled, onSubmit } from "../forms.js";

/** The secret of an `otpauth://` URI (base32), to type into an app that cannot scan; "" without one. */
export function totpSecret(totpURI: string): string {
  try {
    return new URL(totpURI).searchParams.get("secret") ?? "";
  } catch {
    return "";
  }
}

/** The text file of backup codes the download button saves: one code a line, with what they are. */
export function backupCodesFile(email: string, codes: string[]): string {
  return [
    `Backup codes for ${email}`,
    "Each code signs you in once when you have no code from your authenticator app.",
    "",
    ...codes,
    "",
  ].join("\n");
}

/** A titled form of the section. */
function card(id: string, title: string, ...children: (HTMLElement | null)[]): HTMLFormElement {
  return h(
    "form",
    { id, class: "card", novalidate: true, "aria-labelledby": `${id}-title` },
    h("h3", { id: `${id}-title` }, title),
    ...children,
  );
}

const passwordField = () =>
  labelled("Password", h("input", { name: "password", type: "password", required: true, autocomplete: "current-password" }), {
    hint: "Enter your password to confirm it is you.",
  });

/**
 * "Two-factor authentication" on the security page: set up an authenticator app (password, then
 * a QR code drawn here from the `otpauth://` URI, never by a third party, with the secret as text,
 * then a first code that turns it on), backup codes shown once with a download, new backup codes,
 * and turning it off.
 */
export function twoFactorSection(ctx: AppContext): { element: HTMLElement; stop(): void } {
  const status = h("p", { id: "two-factor-status", role: "status" }, "Loading…");
  const body = h("div", { class: "stack" });
  const element = h(
    "section",
    { id: "two-factor-section", class: "card", "aria-labelledby": "two-factor-section-title" },
    h("h2", { id: "two-factor-section-title" }, "Two-factor authentication"),
    h("p", { class: "muted" }, "Signing in with your password, a link or a code then also asks for a code from an app on your phone."),
    status,
    body,
  );
  let alive = true;

  const show = (enabled: boolean) => {
    status.textContent = enabled ? "Two-factor authentication is on." : "Two-factor authentication is off.";
    element.dataset.enabled = String(enabled);
    replace(body, ...(enabled ? [newCodesForm(), disableForm()] : [enableForm()]));
  };

  /** The backup codes, shown this once with a download; "Done" goes back to the section. */
  const showCodes = (codes: string[], title: string) => {
    const email = ctx.user?.email ?? "your account";
    const download = h("button", { type: "button", class: "secondary", id: "backup-codes-download" }, "Download the codes");
    download.addEventListener("click", () => {
      const url = URL.createObjectURL(new Blob([backupCodesFile(email, codes)], { type: "text/plain" }));
      const link = h("a", { href: url, download: "backup-codes.txt", hidden: true });
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(url), 0);
    });
    const done = h("button", { type: "button", id: "backup-codes-done" }, "I have saved them");
    done.addEventListener("click", () => show(true));
    const heading = h("h3", { id: "backup-codes-title", tabindex: -1 }, title);
    replace(
      body,
      h(
        "div",
        { id: "backup-codes", class: "card", role: "region", "aria-labelledby": "backup-codes-title" },
        heading,
        h("p", {}, "Save these now: they are shown only this once. Each one signs you in once when you have no code from your app."),
        h("ol", { id: "backup-code-list", class: "codes" }, ...codes.map((code) => h("li", {}, h("code", {}, code)))),
        h("div", { class: "inline" }, download, done),
      ),
    );
    heading.focus();
  };

  const enableForm = () => {
    const form = card(
      "totp-enable-form",
      "Set up an authenticator app",
      h("p", { class: "muted" }, "Any app that shows 6-digit codes works (for example a password manager or an authenticator app)."),
      passwordField(),
      h("button", { type: "submit" }, "Set up an authenticator app"),
      formSummary(),
    );
    onSubmit(form, async () => {
      const setup = await ctx.client.auth.twoFactor.enable({ password: field(form, "password") });
      // Drawn here (the library loads with this step only): the URI holds the secret, so no QR service sees it.
      const { toDataURL } = await import("qrcode");
      const qr = await toDataURL(setup.totpURI, { errorCorrectionLevel: "M", margin: 2, width: 200 });
      if (alive) replace(body, confirmForm(qr, totpSecret(setup.totpURI), setup.backupCodes));
    });
    return form;
  };

  const confirmForm = (qr: string, secret: string, codes: string[]) => {
    const form = card(
      "totp-confirm-form",
      "Scan the code, then enter the app's first code",
      h("img", { id: "totp-qr", src: qr, width: 200, height: 200, alt: "QR code that adds this account to your authenticator app" }),
      h("p", { class: "muted" }, "Cannot scan it? Type this key into the app instead:"),
      h("p", {}, h("code", { id: "totp-secret", class: "secret" }, secret)),
      labelled(
        "Code from the app",
        h("input", { name: "code", type: "text", required: true, autocomplete: "one-time-code", inputmode: "numeric", maxlength: 12 }),
      ),
      h("button", { type: "submit" }, "Turn on two-factor authentication"),
      formSummary(),
    );
    onSubmit(form, async () => {
      await ctx.client.auth.twoFactor.verifyTotp({ code: field(form, "code").trim() });
      ctx.showNotice("Two-factor authentication is on.");
      status.textContent = "Two-factor authentication is on.";
      element.dataset.enabled = "true";
      showCodes(codes, "Your backup codes");
    });
    queueMicrotask(() => form.querySelector<HTMLInputElement>("input[name=code]")?.focus());
    return form;
  };

  const newCodesForm = () => {
    const form = card(
      "backup-codes-form",
      "New backup codes",
      h("p", { class: "muted" }, "Lost your backup codes, or used most of them? New ones replace them all."),
      passwordField(),
      h("button", { type: "submit", class: "secondary" }, "Make new backup codes"),
      formSummary(),
    );
    onSubmit(form, async () => {
      const codes = await ctx.client.auth.twoFactor.generateBackupCodes({ password: field(form, "password") });
      ctx.showNotice("New backup codes are made; the old ones no longer work.");
      showCodes(codes, "Your new backup codes");
    });
    return form;
  };

  const disableForm = () => {
    const form = card(
      "two-factor-disable-form",
      "Turn off two-factor authentication",
      h("p", { class: "muted" }, "Signing in then needs only your password, a link or a code again."),
      passwordField(),
      h("button", { type: "submit", class: "danger" }, "Turn off two-factor authentication"),
      formSummary(),
    );
    onSubmit(form, async () => {
      if (!(await confirmAction("Turn off two-factor authentication?", "Turn off"))) return;
      await ctx.client.auth.twoFactor.disable({ password: field(form, "password") });
      ctx.showNotice("Two-factor authentication is off.");
      show(false);
    });
    return form;
  };

  ctx.client.auth.twoFactor
    .enabled()
    .then((enabled) => {
      if (alive) show(enabled === true);
    })
    .catch((e: unknown) => {
      status.textContent = "";
      ctx.showError(e);
    });
  return {
    element,
    stop: () => {
      alive = false;
    },
  };
}
