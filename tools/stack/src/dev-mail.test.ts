import { randomBytes } from "node:crypto";
import http from "node:http";
import { createTestDatabase, type TestDatabase } from "@app/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isLoopbackHost, wantsDevMail } from "./dev-mail.js";
import { launchStack, type RunningStack } from "./launch.js";

let database: TestDatabase;
let stack: RunningStack | undefined;
const lines: string[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  stack = await launchStack({
    databaseUrl: database.url,
    port: 0,
    authSecret: randomBytes(32).toString("base64url"),
    dataEncryptionKey: randomBytes(32).toString("base64url"),
    // An SMTP_URL of the environment would turn the mailbox off: this stack has none.
    env: { SMTP_URL: "", UPLOAD_DIR: `/tmp/stack-dev-mail-uploads-${process.pid}` },
    onLine: (name, line) => lines.push(`${name} | ${line}`),
    devMail: true,
  });
}, 60_000);
afterAll(async () => {
  await stack?.stop();
  await database?.drop();
});

/** What Chromium sends when it opens a page. */
const BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";

interface Mailbox {
  messages: { to: string[]; subject: string; links: string[] }[];
}

describe("the development mailbox of a launched stack", () => {
  it("shows the verification mail of a sign-up at {base}/dev/mail with an absolute link whose page verifies", async () => {
    if (!stack) throw new Error("no stack");
    const base = stack.baseUrl;
    const email = `mailbox-${randomBytes(4).toString("hex")}@example.com`;
    const up = await fetch(`${base}/api/auth/sign-up/email`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email, password: "correct horse battery", name: "Mailbox" }),
    });
    expect(up.status).toBe(200);

    // Sign-up mails in the background: poll the mailbox as a person reloading it would.
    let mail: Mailbox["messages"][number] | undefined;
    for (let i = 0; i < 100 && !mail; i += 1) {
      const res = await fetch(`${base}/dev/mail?format=json`);
      expect(res.status).toBe(200);
      expect(res.headers.get("cache-control")).toBe("no-store");
      mail = ((await res.json()) as Mailbox).messages.find((m) => m.to.includes(email));
      if (!mail) await new Promise((r) => setTimeout(r, 100));
    }
    if (!mail) throw new Error("no verification mail arrived");
    const link = mail.links.find((l) => l.includes("verify-email"));
    expect(link?.startsWith(`${base}/`)).toBe(true);
    expect(lines.some((l) => l.startsWith(`mail | To: ${email} Subject: `) && l.includes(`→ ${link}`))).toBe(true);

    const html = await fetch(`${base}/dev/mail`, { headers: { accept: "text/html" } });
    expect(html.headers.get("content-type")).toMatch(/text\/html/);
    expect(await html.text()).toContain(email);

    // The link opens the one-click page (a GET changes nothing); the person types the account's
    // password there, and the page's script posts it as JSON, then goes to the link's landing.
    const page = await fetch(link as string, { headers: { accept: BROWSER_ACCEPT }, redirect: "manual" });
    expect(page.status).toBe(200);
    const pageHtml = await page.text();
    expect(pageHtml).toContain("<h1>Confirm your email address</h1>");
    const action = new URL((/action="([^"]+)"/.exec(pageHtml)?.[1] ?? "").replaceAll("&amp;", "&"), link);
    const click = await fetch(action, {
      method: "POST",
      headers: { "content-type": "application/json", origin: new URL(base).origin },
      body: JSON.stringify({ password: "correct horse battery" }),
    });
    expect(click.status).toBe(200);
    expect(await click.json()).toMatchObject({ status: true, user: { email, emailVerified: true } });
    // No callback of its own: the link lands on identity's page, not on the base's 404.
    action.searchParams.set("verified", "1");
    const landing = await fetch(action, { headers: { accept: BROWSER_ACCEPT }, redirect: "manual" });
    expect(landing.status).toBe(200);
    expect(await landing.text()).toContain("<h1>Your email address is verified</h1>");
    const signIn = await fetch(`${base}/api/auth/sign-in/email`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email, password: "correct horse battery" }),
    });
    const cookie = (signIn.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
    const session = await fetch(`${base}/api/auth/get-session`, { headers: { cookie } });
    expect(((await session.json()) as { user: { emailVerified: boolean } }).user.emailVerified).toBe(true);
  }, 30_000);

  it("answers a foreign Host (a DNS-rebinding page) with 403, at the gateway and at the mailbox's own port", async () => {
    if (!stack?.devMail) throw new Error("no mailbox");
    const get = (base: string, host: string) =>
      new Promise<number>((resolve, reject) => {
        const { hostname, port } = new URL(base);
        http
          .get({ hostname, port, path: "/dev/mail?format=json", headers: { host } }, (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          })
          .on("error", reject);
      });
    const gatewayPort = new URL(stack.baseUrl).port;
    const mailboxPort = new URL(stack.devMail.httpUrl).port;
    expect(await get(stack.baseUrl, `localhost:${gatewayPort}`)).toBe(200);
    expect(await get(stack.baseUrl, `rebind.attacker.example:${gatewayPort}`)).toBe(403);
    expect(await get(stack.devMail.httpUrl, `127.0.0.1:${mailboxPort}`)).toBe(200);
    expect(await get(stack.devMail.httpUrl, `rebind.attacker.example:${mailboxPort}`)).toBe(403);
  });

  it("knows the loopback Host names", () => {
    for (const host of ["localhost", "localhost:3000", "127.0.0.1:9", "[::1]:3000", "LOCALHOST"])
      expect(isLoopbackHost(host), host).toBe(true);
    for (const host of [undefined, "", "evil.example", "localhost.evil.example", "127.0.0.1.nip.io", "x@localhost", "localhost/x"])
      expect(isLoopbackHost(host), String(host)).toBe(false);
  });

  it("stops the catcher and its HTTP server with the stack", async () => {
    if (!stack?.devMail) throw new Error("no mailbox");
    const { httpUrl } = stack.devMail;
    expect((await fetch(httpUrl)).status).toBe(200);
    await stack.stop();
    stack = undefined;
    await expect(fetch(httpUrl)).rejects.toThrow();
  }, 30_000);

  it("runs only without SMTP_URL and outside production", () => {
    expect(wantsDevMail({})).toBe(true);
    expect(wantsDevMail({ NODE_ENV: "development" })).toBe(true);
    expect(wantsDevMail({ SMTP_URL: "smtp://mail.example.com:587" })).toBe(false);
    expect(wantsDevMail({ NODE_ENV: "production" })).toBe(false);
  });
});
