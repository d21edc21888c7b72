/** @app/mailer: sending mail over SMTP (nodemailer). The mail catcher of development and tests is @app/mailer/catcher. */
export {
  checkSmtpUrl,
  createMailer,
  isMailUnavailable,
  type Mailer,
  type MailerSettings,
  type MailMessage,
  MailUnavailableError,
} from "./mailer.js";
