import http from "node:http";
import type { AddressInfo } from "node:net";
import { type CaughtMail, type MailCatcher, renderMailbox, startMailCatcher } from "@app/mailer/catcher";

/** The development mailbox of a launched stack: a real SMTP catcher and the HTTP view of it. */
export interface DevMail {
  /** What identity gets as SMTP_URL. */
  smtpUrl: string;
  /** The mailbox server's base URL: what the gateway gets as DEV_MAIL_URL (served at `/dev/mail`). */
  httpUrl: string;
  messages(): CaughtMail[];
  close(): Promise<void>;
}

/**
 * True when the launcher runs the development mailbox: only without an SMTP_URL of the operator's
 * (real mail wins) and never in production (the gateway would not mount `/dev/mail` there anyway).
 */
export function wantsDevMail(env: Record<string, string | undefined>): boolean {
  return !env.SMTP_URL && env.NODE_ENV !== "production";
}

/** The console line of one received mail: `To: … Subject: … → <link>` per link (or none). */
export function mailLines(mail: CaughtMail): string[] {
  const head = `To: ${mail.to.join(", ")} Subject: ${mail.subject}`;
  return mail.links.length ? mail.links.map((link) => `${head} → ${link}`) : [head];
}

/**
 * True when a Host header names this machine by a loopback name. The gateway forwards `/dev/mail`
 * with the mailbox's own address as Host (apps/gateway/src/gateway.ts), so any other name is a
 * page that reaches the mailbox's port directly, such as a DNS-rebinding page, which sends its own
 * name: it must not read the reset and verification links.
 */
export function isLoopbackHost(host: string | undefined): boolean {
  if (!host || /[\s/?#@\\]/.test(host)) return false;
  try {
    return ["localhost", "127.0.0.1", "[::1]"].includes(new URL(`http://${host}`).hostname);
  } catch {
    return false;
  }
}

/**
 * Starts the mail catcher (packages/mailer, a real SMTP server on a free port) and a tiny HTTP
 * server rendering what it caught. The gateway proxies `{base_url}/dev/mail` here; the mailbox
 * page shows every path under it alike, to loopback Host names only. `no-store`: a reload always
 * shows the newest mail.
 */
export async function startDevMail(onMail: (mail: CaughtMail) => void): Promise<DevMail> {
  const catcher: MailCatcher = await startMailCatcher({ onMessage: onMail });
  const server = http.createServer((req, res) => {
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { allow: "GET, HEAD", "content-type": "text/plain" }).end("method not allowed\n");
      return;
    }
    if (!isLoopbackHost(req.headers.host)) {
      res.writeHead(403, { "content-type": "text/plain" }).end("the development mailbox answers only to localhost\n");
      return;
    }
    const format = new URL(req.url ?? "/", "http://mailbox").searchParams.get("format") ?? undefined;
    const view = renderMailbox(catcher.messages(), { accept: req.headers.accept, format });
    res.writeHead(200, { "content-type": view.contentType, "cache-control": "no-store" });
    res.end(req.method === "HEAD" ? undefined : view.body);
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => resolve());
    });
  } catch (error) {
    await catcher.close();
    throw error;
  }
  const port = (server.address() as AddressInfo).port;
  let closing: Promise<void> | undefined;
  return {
    smtpUrl: catcher.url,
    httpUrl: `http://127.0.0.1:${port}`,
    messages: () => catcher.messages(),
    close() {
      closing ??= Promise.all([
        new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        }),
        catcher.close(),
      ]).then(() => undefined);
      return closing;
    },
  };
}
