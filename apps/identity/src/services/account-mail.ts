/**
 * What one kind of mail says; the mail's value (a link, or with `code` a one-time code shown as
 * text) goes between intro and outro.
 */
interface Template {
  subject: string;
  intro: string;
  action: string;
  outro: string;
  code?: true;
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
  "magic-link": {
    subject: "Your sign-in link",
    intro: "Open this link within 5 minutes to sign in. It works once; the page it opens asks for one click before it signs you in:",
    action: "Sign in",
    outro: "If you did not ask for it, ignore this mail: nobody can use it without access to your mailbox.",
  },
  "sign-in-otp": {
    subject: "Your sign-in code",
    intro: "Enter this code within 5 minutes to sign in. It works once, and three wrong tries end it:",
    action: "Sign-in code",
    outro: "If you did not ask for it, ignore this mail: nobody can use it without access to your mailbox.",
    code: true,
  },
  "email-verification-otp": {
    subject: "Your email verification code",
    intro: "Enter this code within 5 minutes to verify your email address:",
    action: "Verification code",
    outro: "If you did not create an account, ignore this mail.",
    code: true,
  },
  "forget-password-otp": {
    subject: "Your password reset code",
    intro: "Enter this code within 5 minutes to choose a new password. The new password signs out every device:",
    action: "Reset code",
    outro: "If you did not ask for it, ignore this mail: your password stays as it is.",
    code: true,
  },
  "two-factor-otp": {
    subject: "Your sign-in verification code",
    intro: "Your password was just entered correctly. Enter this code within 5 minutes to finish signing in:",
    action: "Verification code",
    outro: "If it was not you, change your password now: someone knows it.",
    code: true,
  },
  "two-factor-enabled": {
    subject: "Two-factor authentication is on",
    intro: "Two-factor authentication was turned on for your account. Review your account's security here:",
    action: "Account security",
    outro: "If it was not you, change your password and check your second factors at once.",
  },
  "two-factor-disabled": {
    subject: "Two-factor authentication is off",
    intro: "Two-factor authentication was turned off for your account. Review your account's security here:",
    action: "Account security",
    outro: "If it was not you, change your password and turn two-factor authentication on again.",
  },
  "backup-codes-regenerated": {
    subject: "New backup codes",
    intro: "New backup codes were made for your account; the old ones no longer work. Review your account's security here:",
    action: "Account security",
    outro: "If it was not you, change your password at once.",
  },
  "passkey-added": {
    subject: "A passkey was added",
    intro: "A passkey was added to your account. Review your passkeys here:",
    action: "Account security",
    outro: "If it was not you, delete that passkey and change your password.",
  },
  "confirm-delete": {
    subject: "Confirm deleting your account",
    intro:
      "Someone signed in to your account asked to delete it. If it was you, open this link within an hour and confirm: the account and everything in it are deleted for good:",
    action: "Delete my account",
    outro: "If you did not ask for it, ignore this mail: nothing is deleted.",
  },
  "organization-invitation": {
    subject: "You are invited to an organization",
    intro:
      "Someone invited this address to join an organization. Open this link within 48 hours to see the invitation and accept or decline it (you sign in or create an account with this address first):",
    action: "See the invitation",
    outro: "If you do not know the organization, ignore this mail: nothing happens unless you accept.",
  },
} as const satisfies Record<string, Template>;

export type MailKind = keyof typeof TEMPLATES;

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);

/** The text and HTML bodies of a mail of `kind` carrying `link` (services/mail-outbox-worker.ts renders each mail as it sends it). */
export function renderAccountMail(kind: MailKind, link: string): { subject: string; text: string; html: string } {
  const t: Template = TEMPLATES[kind];
  if (t.code) return renderCodeMail(t, link);
  const text = `${t.intro}\n\n${link}\n\n${t.outro}\n`;
  const html = `<!doctype html><html><body style="font-family:system-ui,sans-serif">
<p>${escapeHtml(t.intro)}</p>
<p><a href="${escapeHtml(link)}">${escapeHtml(t.action)}</a></p>
<p style="color:#555;font-size:13px">${escapeHtml(link)}</p>
<p>${escapeHtml(t.outro)}</p>
</body></html>`;
  return { subject: t.subject, text, html };
}

/** A mail that shows a one-time code instead of a link. */
function renderCodeMail(t: Template, code: string): { subject: string; text: string; html: string } {
  const text = `${t.intro}\n\n${code}\n\n${t.outro}\n`;
  const html = `<!doctype html><html><body style="font-family:system-ui,sans-serif">
<p>${escapeHtml(t.intro)}</p>
<p style="font-size:24px;letter-spacing:4px;font-family:monospace"><strong>${escapeHtml(code)}</strong></p>
<p>${escapeHtml(t.outro)}</p>
</body></html>`;
  return { subject: t.subject, text, html };
}
