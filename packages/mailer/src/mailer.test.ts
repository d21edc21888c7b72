import { createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type MailCatcher, mailSummary, startMailCatcher } from "./catcher/catcher.js";
import { renderMailbox } from "./catcher/mailbox.js";
import { checkSmtpUrl, createMailer, isMailUnavailable } from "./mailer.js";

let catcher: MailCatcher;
beforeAll(async () => {
  catcher = await startMailCatcher();
});
afterAll(async () => {
  await catcher?.close();
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe("mailer over real SMTP", () => {
  it("delivers text and HTML bodies with credentials taken from the URL", async () => {
    const mailer = createMailer({
      smtpUrl: catcher.url.replace("smtp://", "smtp://user:p%40ss@"),
      from: "Accounts <no-reply@example.com>",
    });
    await mailer.send({ to: "ann@example.com", subject: "Hello", text: "Open https://app.example.com/x?token=abc.", html: "<p>Hi</p>" });
    mailer.close();
    const mail = await catcher.waitFor((m) => m.subject === "Hello");
    expect(mail.to).toEqual(["ann@example.com"]);
    expect(mail.from).toBe("no-reply@example.com");
    expect(mail.html).toContain("<p>Hi</p>");
    expect(mail.links).toEqual(["https://app.example.com/x?token=abc"]);
    expect(mailSummary(mail)).toBe("mail to ann@example.com: Hello\n  https://app.example.com/x?token=abc");
  });

  it("rejects with mail_unavailable when the server refuses or is down", async () => {
    const mailer = createMailer({ smtpUrl: catcher.url, from: "a@example.com", timeoutMs: 2_000 });
    catcher.setFailing(true);
    try {
      const error = await mailer.send({ to: "b@example.com", subject: "x", text: "x", html: "x" }).catch((e: unknown) => e);
      expect(isMailUnavailable(error)).toBe(true);
      expect((error as { code: string }).code).toBe("mail_unavailable");
    } finally {
      catcher.setFailing(false);
      mailer.close();
    }
    const down = createMailer({ smtpUrl: `smtp://u:secret-pw@127.0.0.1:${await freePort()}`, from: "a@example.com", timeoutMs: 2_000 });
    const error = await down.send({ to: "b@example.com", subject: "x", text: "x", html: "x" }).catch((e: unknown) => e);
    down.close();
    expect(isMailUnavailable(error)).toBe(true);
    expect(String((error as Error).message)).not.toContain("secret-pw");
  });

  it("refuses URLs that are not smtp:// or smtps://", () => {
    expect(checkSmtpUrl("http://x")).toMatch(/smtp:\/\//);
    expect(checkSmtpUrl("nope")).toMatch(/not a URL/);
    expect(checkSmtpUrl("smtps://u:p@mail.example.com:465")).toBeUndefined();
  });

  it("renders the mailbox as escaped HTML or JSON", async () => {
    const mailer = createMailer({ smtpUrl: catcher.url, from: "a@example.com" });
    await mailer.send({ to: "c@example.com", subject: "<script>x</script>", text: "see http://localhost/a", html: "<b>x</b>" });
    mailer.close();
    await catcher.waitFor((m) => m.to.includes("c@example.com"));
    const html = renderMailbox(catcher.messages());
    expect(html.contentType).toMatch(/text\/html/);
    expect(html.body).not.toContain("<script>x");
    expect(html.body).toContain('<a href="http://localhost/a">');
    const json = renderMailbox(catcher.messages(), { accept: "application/json" });
    expect(JSON.parse(json.body).messages[0].links).toEqual(["http://localhost/a"]);
  });
});
