import { Writable } from "node:stream";
import type { TestDatabase } from "@app/db/testing";
import { createLogger } from "@app/http-kit";
import { createMailer, type Mailer } from "@app/mailer";
import { type CaughtMail, type MailCatcher, startMailCatcher } from "@app/mailer/catcher";
import { MailOutboxWorker, type MailWorkerOptions } from "../src/services/mail-outbox-worker.js";
import { identityKit, type Kit } from "./kit.js";

/** The worker's pace in tests: prompt polls and retries (production waits seconds to minutes). */
export const TEST_WORKER_OPTIONS: MailWorkerOptions = { pollMs: 50, retryBaseMs: 100, retryMaxMs: 400, maxAttempts: 4 };

/** An identity app whose mail goes over SMTP to a real mail catcher started for the test. */
export interface MailKit extends Kit {
  database: TestDatabase;
  catcher: MailCatcher;
  mailer: Mailer;
  /** The outbox worker sending the app's mail, as server.ts runs it. */
  worker: MailOutboxWorker;
  /** The first mail to `to` (with `subject` containing the text, if given) that arrives. */
  mailTo(to: string, subject?: string): Promise<CaughtMail>;
  /** Resolves once the outbox holds no mail waiting or being sent (polled). */
  settled(timeoutMs?: number): Promise<void>;
}

/** Starts a catcher (smtp-server on a free port), an identity app sending to it, and its outbox worker. */
export async function mailKit(
  options: { env?: Record<string, string>; now?: () => number; worker?: MailWorkerOptions } = {},
): Promise<MailKit> {
  const catcher = await startMailCatcher();
  const mailer = createMailer({
    smtpUrl: catcher.url.replace("smtp://", "smtp://identity:secret@"),
    from: "Accounts <no-reply@example.com>",
    timeoutMs: 3_000,
  });
  const kit = await identityKit({ env: options.env ?? {}, ...(options.now ? { now: options.now } : {}), mailer });
  // The worker logs into the kit's captured lines, as the app does.
  const destination = new Writable({
    write(chunk, _enc, cb) {
      kit.logs.push(String(chunk));
      cb();
    },
  });
  const logger = createLogger({ name: "identity-test", level: "debug", destination });
  const worker = new MailOutboxWorker({
    outbox: kit.service.mailOutbox,
    mailer,
    logger,
    options: { ...TEST_WORKER_OPTIONS, ...options.worker },
  });
  worker.start();
  return {
    ...kit,
    catcher,
    mailer,
    worker,
    mailTo: (to, subject) => catcher.waitFor((m) => m.to.includes(to) && (subject === undefined || m.subject.includes(subject))),
    async settled(timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while ((await kit.db.prisma.mailOutbox.count({ where: { state: { in: ["pending", "sending"] } } })) > 0) {
        if (Date.now() > deadline) throw new Error(`the outbox still holds mail after ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    async close() {
      await worker.stop();
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
