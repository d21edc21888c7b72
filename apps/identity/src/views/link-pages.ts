import { createHash } from "node:crypto";
import type { Response } from "express";
import type { FoundToken } from "../services/mail-tokens.js";

// The one-click pages of mailed links (routes/mailed-links.ts): a GET of a link changes nothing
// (a mail scanner's prefetch is a GET), so the page asks for the click that POSTs it. The page is
// served by identity itself, from the link's own origin, with a policy of its own: its inline
// script and style by hash, forms and fetches to this origin only, and a referrer policy that
// keeps the Origin header on the POST (under `no-referrer` a browser sends `Origin: null`, which
// middleware/origin-check.ts refuses).

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);

const STYLE =
  "body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;line-height:1.5}" +
  "label,input,button{display:block;font-size:1rem}input{margin:.25rem 0 1rem;padding:.5rem;width:100%;box-sizing:border-box}" +
  "button,a.button{padding:.6rem 1.2rem}a.button{display:inline-block;border:1px solid;border-radius:4px;text-decoration:none}" +
  ".note{color:#555;font-size:.9rem}#problem{color:#b00020}";

/**
 * A typed password goes as JSON: jsonBody (packages/http-kit) answers any other body with 415, and
 * a plain form POST has none (the password field has no name, so the form sends nothing but the
 * token in its action). The answer names where to go next, or, for a link without a callback,
 * the link's landing (`&verified=1`: {@link verifiedPage}).
 */
const SCRIPT = `document.getElementById("confirm").addEventListener("submit", async (event) => {
  const form = event.target;
  const field = document.getElementById("password");
  if (!field || !field.value) return;
  event.preventDefault();
  const problem = document.getElementById("problem");
  problem.textContent = "";
  try {
    const res = await fetch(form.action, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ password: field.value }), credentials: "same-origin" });
    const body = await res.json().catch(() => ({}));
    if (res.ok) {
      const landing = new URL(form.action);
      landing.searchParams.set("verified", "1");
      return location.assign(body.redirectTo || landing.href);
    }
    problem.textContent = body.code === "invalid_password" ? "That password is not this account's. Try again, or confirm without it." : "The link is invalid, used or expired.";
  } catch {
    problem.textContent = "The service could not be reached. Try again.";
  }
});`;

const hash = (text: string) => `'sha256-${createHash("sha256").update(text).digest("base64")}'`;
const SCRIPT_HASH = hash(SCRIPT);
const STYLE_HASH = hash(STYLE);

/** What one page says and does. */
export interface LinkPage {
  title: string;
  /** Sentences above the button (plain text). */
  lead: string[];
  /** The form: where it posts (this link's POST) and its button; none for a page that only tells. */
  form?: { action: string; button: string; passwordField?: { label: string; note: string } };
  /** Origins the POST may redirect to (the callback's): a form's redirect is held to form-action. */
  redirectOrigins?: readonly string[];
  /** A link below the sentences ("Continue" to the web app). */
  link?: { href: string; text: string };
}

/** Sends `page` as an HTML answer with its own security policy. */
export function sendLinkPage(res: Response, page: LinkPage, status = 200): void {
  const form = page.form;
  const password = form?.passwordField;
  const formHtml = form
    ? `<form id="confirm" method="post" action="${escapeHtml(form.action)}">
${
  password
    ? `<label for="password">${escapeHtml(password.label)}</label>
<input id="password" type="password" autocomplete="current-password">
<p class="note">${escapeHtml(password.note)}</p>`
    : ""
}<button type="submit">${escapeHtml(form.button)}</button>
<p id="problem" role="alert"></p>
</form>${password ? `\n<script>${SCRIPT}</script>` : ""}`
    : "";
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(page.title)}</title><style>${STYLE}</style></head>
<body><main><h1>${escapeHtml(page.title)}</h1>
${page.lead.map((p) => `<p>${escapeHtml(p)}</p>`).join("\n")}
${formHtml}${page.link ? `<p><a class="button" id="continue" href="${escapeHtml(page.link.href)}">${escapeHtml(page.link.text)}</a></p>` : ""}
</main></body></html>`;
  const formAction = ["'self'", ...(page.redirectOrigins ?? [])].join(" ");
  res.setHeader(
    "content-security-policy",
    `default-src 'none';script-src ${SCRIPT_HASH};style-src ${STYLE_HASH};connect-src 'self';form-action ${formAction};base-uri 'none';frame-ancestors 'none'`,
  );
  res.setHeader("referrer-policy", "same-origin");
  res.status(status).type("html").send(html);
}

/**
 * The confirmation page of a link GET verify-email found. Its form posts the token (and the
 * callback) back to this path, relative, so it works on whatever origin serves identity. Without
 * a callback the click may lead to the reset page at `home` (routes/mailed-links.ts).
 */
export function confirmationPage(
  res: Response,
  found: FoundToken,
  token: string,
  callback: string | undefined,
  home: string | undefined,
): void {
  const action = `?${new URLSearchParams({ token, ...(callback ? { callbackURL: callback } : {}) })}`;
  const next = callback ?? home;
  const redirectOrigins = next ? [new URL(next).origin] : [];
  const pages: Partial<Record<FoundToken["purpose"], Omit<LinkPage, "form"> & { button: string }>> = {
    "confirm-email-change": {
      title: "Confirm the change of your email address",
      lead: [
        `Your account's email address is about to change to ${found.email}.`,
        "Once you confirm, a link goes to that address; the change happens when it is opened there.",
      ],
      button: "Confirm the change",
    },
    "change-email": {
      title: "Confirm your new email address",
      lead: [`Your account's email address is about to change to ${found.email}.`, "Press the button to make the change."],
      button: "Confirm the new address",
    },
    "revert-email-change": {
      title: "Take your account back",
      lead: [
        `Your account's email address comes back to ${found.email}.`,
        "Every session, the password and every sign-in provider of the account end, and you choose a new password next.",
      ],
      button: "Take my account back",
    },
  };
  const page = pages[found.purpose];
  if (page) {
    sendLinkPage(res, { title: page.title, lead: page.lead, form: { action, button: page.button }, redirectOrigins });
    return;
  }
  sendLinkPage(res, {
    title: "Confirm your email address",
    lead: [`Press the button to confirm that ${found.email} is yours.`],
    form: {
      action,
      button: "Confirm my address",
      passwordField: {
        label: "The account's password, if you created it (optional)",
        note:
          "Without it, the account's password, its sessions and its linked sign-in providers end, and you choose a new password next: " +
          "an account someone else created with your address then holds nothing of theirs.",
      },
    },
    redirectOrigins,
  });
}

/** What the click on an email change confirmed from the current address answers: where the next link went. */
export function linkSentPage(res: Response, newEmail: string): void {
  sendLinkPage(res, {
    title: "Check the new address's inbox",
    lead: [`A link is on its way to ${newEmail}. Open it to finish the change; until then your address stays as it is.`],
  });
}

/**
 * True for a callback on the service's own base: BASE_URL's origin at `/` (where a link without
 * a callbackURL points, services/account-recovery.ts) or at BASE_URL's path. The service serves
 * no page there (GET / answers a 404 envelope), so such a link lands on identity's own page.
 */
export function isServiceBase(callback: string, baseUrl: string): boolean {
  const url = new URL(callback);
  const base = new URL(baseUrl);
  const trim = (path: string) => path.replace(/\/+$/, "");
  return url.origin === base.origin && (trim(url.pathname) === "" || trim(url.pathname) === trim(base.pathname));
}

/** The web app's address for "Continue": the first trusted origin (CORS_ORIGINS), if any. */
export function homeOf(trustedOrigins: readonly string[]): string | undefined {
  const first = trustedOrigins[0];
  return first ? new URL("/", first).href : undefined;
}

const continueLink = (href: string | undefined) => (href ? { link: { href, text: "Continue" } } : {});

/**
 * Where a verification link without a callback lands: the address is verified (`already` when
 * the link was used before, services/mail-tokens.ts), or verified with the password ended (a
 * click without the account's session or password, and no web app to choose a new one on).
 */
export function verifiedPage(res: Response, options: { already: boolean; continueTo: string | undefined; passwordEnded?: boolean }): void {
  const lead = options.already
    ? ["This link was used before: there is nothing more to do."]
    : options.passwordEnded
      ? [
          "The account's password, sessions and sign-in providers ended with this click, as the email said.",
          "Choose a new password with a password reset for this address.",
        ]
      : ["You can sign in with it now."];
  sendLinkPage(res, {
    title: options.already ? "Your email address is already verified" : "Your email address is verified",
    lead,
    ...continueLink(options.continueTo),
  });
}

/** Where an email-change link without a callback lands once the change is made. */
export function emailChangedPage(res: Response, continueTo: string | undefined): void {
  sendLinkPage(res, {
    title: "Your email address is changed",
    lead: ["Sign in with the new address from now on."],
    ...continueLink(continueTo),
  });
}

/** A link that is unknown, used or expired, opened in a browser without a callback: 400. */
export function invalidLinkPage(res: Response, continueTo: string | undefined): void {
  sendLinkPage(
    res,
    {
      title: "This link is invalid or has expired",
      lead: ["It may have been used already, or replaced by a newer one. Ask for a new link where you signed in."],
      ...continueLink(continueTo),
    },
    400,
  );
}

/** Where the deletion link (GET delete-user/callback) without a callback lands once the account is deleted. */
export function accountDeletedPage(res: Response): void {
  sendLinkPage(res, {
    title: "Your account is deleted",
    lead: ["The account and everything in it are deleted, and every session of it has ended."],
  });
}

/**
 * The deletion link opened where its account is not signed in (401): it deletes only in a browser
 * that holds a session of the account, so a mail scanner's prefetch, or anyone else holding the
 * mail, deletes nothing.
 */
export function signInToDeletePage(res: Response, continueTo: string | undefined): void {
  sendLinkPage(
    res,
    {
      title: "Sign in to delete your account",
      lead: ["This link deletes the account only in a browser where you are signed in to it. Sign in, then open the link again."],
      ...continueLink(continueTo),
    },
    401,
  );
}
