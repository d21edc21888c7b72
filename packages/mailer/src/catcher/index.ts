/**
 * @app/mailer/catcher: the development and test side of mail, a real SMTP server that keeps what
 * it receives (smtp-server, mailparser) and the mailbox views of it. Kept out of the main entry so
 * that a service sending mail never loads a mail server (src/entry.test.ts).
 */
export { type CaughtMail, linksOf, MAX_CAUGHT, type MailCatcher, mailSummary, startMailCatcher } from "./catcher.js";
export { mailboxHtml, mailboxJson, type RenderedMailbox, renderMailbox } from "./mailbox.js";
