import type { TestDatabase } from "@app/db/testing";
import { type CaughtMail, createMailer, type MailCatcher, type Mailer, startMailCatcher } from "@app/mailer";
import { identityKit, type Kit } from "./kit.js";

/** An identity app whose mail goes over SMTP to a real mail catcher started for the test. */
export interface MailKit extends Kit {
  database: TestDatabase;
  catcher: MailCatcher;
  mailer: Mailer;
  /** The first mail to `to` (with `subject` containing the text, if given) that arrives. */
  mailTo(to: string, subject?: string): Promise<CaughtMail>;
}

/** Starts a catcher (smtp-server on a free port) and an identity app sending to it. */
export async function mailKit(options: { env?: Record<string, string>; now?: () => number } = {}): Promise<MailKit> {
  const catcher = await startMailCatcher();
  const mailer = createMailer({
    smtpUrl: catcher.url.replace("smtp://", "smtp://identity:secret@"),
    from: "Accounts <no-reply@example.com>",
    timeoutMs: 3_000,
  });
  const kit = await identityKit({ ...options, mailer });
  return {
    ...kit,
    catcher,
    mailer,
    mailTo: (to, subject) => catcher.waitFor((m) => m.to.includes(to) && (subject === undefined || m.subject.includes(subject))),
    async close() {
      await kit.close();
      mailer.close();
      await catcher.close();
    },
  };
}

/** The path and query of a mailed absolute link (supertest drives the app without its origin). */
export function pathOf(link: string): string {
  const url = new URL(link);
  return `${url.pathname}${url.search}`;
}

/** The one link of a mail. */
export function linkOf(mail: CaughtMail): string {
  const [link] = mail.links;
  if (!link) throw new Error(`mail "${mail.subject}" has no link`);
  return link;
}
