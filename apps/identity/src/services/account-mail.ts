/** What one kind of mail says; `{link}` is where the absolute link goes. */
interface Template {
  subject: string;
  intro: string;
  action: string;
  outro: string;
}

const TEMPLATES = {
  "reset-password": {
    subject: "Reset your password",
    intro:
      "Someone asked to reset the password of your account. If it was you, open this link within an hour. The new password signs out every device and unlinks every sign-in provider (link them again from Account settings):",
    action: "Reset password",
    outro: "If you did not ask for it, ignore this mail: your password stays as it is.",
  },
  "verify-email": {
    subject: "Verify your email address",
    intro:
      "Confirm that this address is yours by opening this link within 24 hours. Opened where you are not signed in, it asks for the account's password: without it, the account's password, sessions and sign-in providers end and you choose a new password (so that an account someone else created with your address keeps nothing of theirs):",
    action: "Verify email",
    outro: "If you did not create an account, ignore this mail.",
  },
  "change-email": {
    subject: "Confirm your new email address",
    intro: "Your account's email is about to change to this address. Open this link to confirm it:",
    action: "Confirm new email",
    outro: "If you did not ask for it, ignore this mail: nothing changes.",
  },
  "confirm-email-change": {
    subject: "Confirm the change of your email address",
    intro:
      "Someone signed in to your account asked to change its email address. If it was you, open this link within 24 hours and confirm: a second link then goes to the new address, and the change happens when that one is opened:",
    action: "Confirm the change",
    outro:
      "If you did not ask for it, ignore this mail: the address stays as it is. Someone may be signed in as you: change your password.",
  },
  "email-changed": {
    subject: "Your account's email address was changed",
    intro:
      "Your account's email address was changed to another one, and mail now goes there. If you did not do this, open this link within 7 days: the address comes back to this one, every session and sign-in provider ends, and you choose a new password:",
    action: "Take my account back",
    outro: "If it was you, ignore this mail.",
  },
  "sign-up-attempt": {
    subject: "Someone tried to create an account with your address",
    intro:
      "Someone tried to create an account with this email address, which already has one. No account was created. If it was you, sign in with your password as usual, or set a new password within an hour here:",
    action: "Reset password",
    outro: "If it was not you, ignore this mail: your account and password stay as they are.",
  },
} as const satisfies Record<string, Template>;

export type MailKind = keyof typeof TEMPLATES;

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);

/** The text and HTML bodies of a mail of `kind` carrying `link` (services/mail-outbox-worker.ts renders each mail as it sends it). */
export function renderAccountMail(kind: MailKind, link: string): { subject: string; text: string; html: string } {
  const t: Template = TEMPLATES[kind];
  const text = `${t.intro}\n\n${link}\n\n${t.outro}\n`;
  const html = `<!doctype html><html><body style="font-family:system-ui,sans-serif">
<p>${escapeHtml(t.intro)}</p>
<p><a href="${escapeHtml(link)}">${escapeHtml(t.action)}</a></p>
<p style="color:#555;font-size:13px">${escapeHtml(link)}</p>
<p>${escapeHtml(t.outro)}</p>
</body></html>`;
  return { subject: t.subject, text, html };
}
