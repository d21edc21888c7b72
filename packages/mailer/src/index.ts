export { type CaughtMail, linksOf, MAX_CAUGHT, type MailCatcher, mailSummary, startMailCatcher } from "./catcher.js";
export { mailboxHtml, mailboxJson, type RenderedMailbox, renderMailbox } from "./mailbox.js";
export {
  checkSmtpUrl,
  createMailer,
  isMailUnavailable,
  type Mailer,
  type MailerSettings,
  type MailMessage,
  MailUnavailableError,
} from "./mailer.js";
