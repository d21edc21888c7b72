import type { AddressInfo } from "node:net";
import { simpleParser } from "mailparser";
import { SMTPServer } from "smtp-server";

/** A message the catcher received, parsed. */
export interface CaughtMail {
  id: number;
  from: string;
  to: string[];
  subject: string;
  text: string;
  html: string | undefined;
  receivedAt: Date;
  /** Every http(s) link in the text body, in order. */
  links: string[];
}

/** A running catcher. */
export interface MailCatcher {
  /** `smtp://127.0.0.1:<port>`: what SMTP_URL should be. */
  url: string;
  port: number;
  /** Received messages, oldest first (the newest {@link MAX_CAUGHT} are kept). */
  messages(): CaughtMail[];
  /** Resolves with the first message (already received or arriving) that `match` accepts. */
  waitFor(match: (mail: CaughtMail) => boolean, timeoutMs?: number): Promise<CaughtMail>;
  /** While true, every message is refused with 451 (a mail server in trouble). */
  setFailing(failing: boolean): void;
  close(): Promise<void>;
}

/** Most messages a catcher keeps (bounded memory in a long development session). */
export const MAX_CAUGHT = 500;
/** Largest message the catcher accepts. */
const MAX_SIZE = 1024 * 1024;

/** The http(s) links of a text, without trailing punctuation. */
export function linksOf(text: string): string[] {
  return [...text.matchAll(/https?:\/\/[^\s<>"')]+/g)].map((m) => m[0].replace(/[.,;:!?]+$/, ""));
}

/** One line per mail and one per link, for the launcher's console ("mail to ann@…: Reset your password"). */
export function mailSummary(mail: CaughtMail): string {
  return [`mail to ${mail.to.join(", ")}: ${mail.subject}`, ...mail.links.map((link) => `  ${link}`)].join("\n");
}

/**
 * A development and test mail catcher: a real SMTP server (smtp-server) on `host:port` (port 0:
 * a free one) that accepts any sender, recipient and credentials, parses each message
 * (mailparser) and keeps it in memory. `onMessage` sees each one (the launcher prints its links).
 */
export async function startMailCatcher(
  options: { port?: number; host?: string; onMessage?: (mail: CaughtMail) => void } = {},
): Promise<MailCatcher> {
  const host = options.host ?? "127.0.0.1";
  const caught: CaughtMail[] = [];
  const waiters = new Set<{ match: (m: CaughtMail) => boolean; resolve: (m: CaughtMail) => void }>();
  let failing = false;
  let next = 1;
  const server = new SMTPServer({
    secure: false,
    disabledCommands: ["STARTTLS"],
    authOptional: true,
    allowInsecureAuth: true,
    size: MAX_SIZE,
    logger: false,
    onAuth(_auth, _session, callback) {
      callback(null, { user: "catcher" });
    },
    onData(stream, _session, callback) {
      if (failing) {
        stream.resume();
        stream.on("end", () => callback(Object.assign(new Error("mailbox unavailable"), { responseCode: 451 })));
        return;
      }
      simpleParser(stream)
        .then((parsed) => {
          const to = (Array.isArray(parsed.to) ? parsed.to : parsed.to ? [parsed.to] : []).flatMap((a) =>
            a.value.map((v) => v.address ?? ""),
          );
          const text = parsed.text ?? "";
          const mail: CaughtMail = {
            id: next++,
            from: parsed.from?.value[0]?.address ?? "",
            to,
            subject: parsed.subject ?? "",
            text,
            html: typeof parsed.html === "string" ? parsed.html : undefined,
            receivedAt: new Date(),
            links: linksOf(text),
          };
          caught.push(mail);
          if (caught.length > MAX_CAUGHT) caught.shift();
          options.onMessage?.(mail);
          for (const waiter of waiters) {
            if (!waiter.match(mail)) continue;
            waiters.delete(waiter);
            waiter.resolve(mail);
          }
          callback();
        })
        .catch((error: Error) => callback(error));
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  server.on("error", () => undefined);
  const port = (server.server.address() as AddressInfo).port;
  return {
    url: `smtp://${host}:${port}`,
    port,
    messages: () => [...caught],
    waitFor(match, timeoutMs = 10_000) {
      const found = caught.find(match);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const waiter = {
          match,
          resolve: (mail: CaughtMail) => {
            clearTimeout(timer);
            resolve(mail);
          },
        };
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          reject(new Error(`no matching mail within ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.add(waiter);
      });
    },
    setFailing(value) {
      failing = value;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
