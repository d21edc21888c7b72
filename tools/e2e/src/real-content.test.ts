import { createMailer } from "@app/mailer";
import { type MailCatcher, mailboxHtml, startMailCatcher } from "@app/mailer/catcher";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type E2eStack, openBrowser, STARTUP_MS, startE2eStack, storedToken, TEST_MS } from "./harness.js";
import { checkPage, PHONE, sidewaysOverflow } from "./page-checks.js";
import { csvForm, LONG_URL, LONG_WORD, longFilename, longText, longTitle, ROWS, type Seeder, seeder, times } from "./seed.js";

// The pages that broke on real content (the task list, a task, generate, upload, the development
// mailbox) in Chromium against a real stack, each holding what people really type and paste.
let catcher: MailCatcher;
let env: E2eStack;
let browser: Browser;
let page: Page;
let seed: Seeder;
/** Uncaught page errors and console errors. */
const problems: string[] = [];
const email = "lin@example.com";
const PASSWORD = "correct horse battery";

beforeAll(async () => {
  catcher = await startMailCatcher({ port: 0 });
  [env, { browser, page }] = await Promise.all([startE2eStack({ SMTP_URL: catcher.url }), openBrowser()]);
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() === "error" && !message.text().startsWith("Failed to load resource")) problems.push(message.text());
  });
  await page.goto(env.webUrl);
  await page.locator("#signup-form input[name=name]").fill("Lin Content");
  await page.locator("#signup-form input[name=email]").fill(email);
  await page.locator("#signup-form input[name=password]").fill(PASSWORD);
  await page.locator("#signup-form button[type=submit]").click();
  await page.locator("#task-list[data-loaded]").waitFor({ state: "attached" });
  seed = seeder(env.baseUrl, () => storedToken(page));
}, STARTUP_MS);
afterAll(async () => {
  await browser?.close();
  await env?.stop();
  await catcher?.close();
});

/** The element that has focus, as `tag[name=…]`. */
const focused = () =>
  page.evaluate(() => {
    const el = document.activeElement;
    return el ? `${el.tagName.toLowerCase()}[name=${el.getAttribute("name") ?? ""}]` : "";
  });

describe("pages holding real content, in Chromium, against the real stack", { timeout: TEST_MS * 2 }, () => {
  it("tasks: the new-task field has a line of its own; 55 long titles keep a readable column", async () => {
    await times(ROWS, (i) => seed.post("/api/tasks", { title: longTitle(i) }));
    await page.reload();
    await page.locator("#task-list li").nth(19).waitFor();
    const form = page.locator("#create-task");
    await form.locator("button[type=submit]").click();
    await form.locator('[data-issue-for="title"]', { hasText: "title is required" }).waitFor();
    expect(await focused()).toBe("input[name=title]");
    await checkPage(page, "tasks holding long titles");
    await page.setViewportSize(PHONE);
    const widths = await page.evaluate(() => ({
      field: document.querySelector("#create-task input[name=title]")?.getBoundingClientRect().width ?? 0,
      title: document.querySelector("#task-list li a")?.getBoundingClientRect().width ?? 0,
    }));
    expect(widths.field).toBeGreaterThan(300);
    expect(widths.title).toBeGreaterThan(300);
    await form.locator("input[name=title]").fill(`Call ${LONG_WORD}`);
    await form.locator("button[type=submit]").click();
    await page
      .locator("#task-list li")
      .first()
      .filter({ hasText: `Call ${LONG_WORD}` })
      .waitFor();
    await page.locator("#task-list-more").click();
    await page.locator("#task-list li").nth(39).waitFor();
  });

  it("a task holding 55 long messages, each with a long-named attachment", async () => {
    const task = await seed.post("/api/tasks", { title: longTitle(0) });
    await times(ROWS, (i) => {
      const form = csvForm("files", i);
      form.set("text", longText(i));
      return seed.upload(`/api/tasks/${task.id}/messages`, form);
    });
    await page.goto(`${env.webUrl}/#/tasks/${task.id}`);
    await page
      .locator("#messages li.message")
      .nth(ROWS - 1)
      .waitFor();
    expect(await page.locator("#messages li.message a.attachment").first().textContent()).toContain(longFilename(1));
    const form = page.locator("#message-form");
    await form.locator("button[type=submit]").click();
    await form.locator('[data-issue-for="text"]', { hasText: "text is required" }).waitFor();
    expect(await focused()).toBe("textarea[name=text]");
    await checkPage(page, "task holding long messages");
  });

  it("generate: an empty prompt gets the service's sentence under the field; a long output wraps", async () => {
    await page.locator("#nav-generate").click();
    const form = page.locator("#generate-form");
    expect(await form.evaluate((f: HTMLFormElement) => f.noValidate)).toBe(true);
    await form.locator("button[type=submit]").click();
    await form.locator('[data-issue-for="prompt"]', { hasText: "prompt is required" }).waitFor();
    expect(await focused()).toBe("textarea[name=prompt]");
    expect(await form.locator("textarea[name=prompt]").getAttribute("aria-invalid")).toBe("true");

    const prompt = `${Array.from({ length: 8 }, (_, i) => longText(i)).join(" ")} ${LONG_WORD.repeat(6)}`;
    await form.locator("textarea[name=prompt]").fill(prompt);
    await form.locator("button[type=submit]").click();
    await page.locator("#generate-status[data-state=done]").waitFor();
    expect(await page.locator("#generate-output").textContent()).toBe(`Local echo: ${prompt}`);
    expect(await form.locator('[data-issue-for="prompt"]').textContent()).toBe("");
    await checkPage(page, "generate with a long output", "generate");
    await page.setViewportSize(PHONE);
    expect(await sidewaysOverflow(page)).toBeLessThanOrEqual(0);
    const output = await page.locator("#generate-output").evaluate((el) => ({ scroll: el.scrollWidth, client: el.clientWidth }));
    expect(output.scroll).toBeLessThanOrEqual(output.client);
  });

  it("upload: sentences under the field; 55 uploads listed again after a reload; delete takes the file away", async () => {
    await times(ROWS, (i) => seed.upload("/api/uploads", csvForm("file", i)));
    await page.locator("#nav-upload").click();
    const form = page.locator("#upload-form");
    expect(await form.evaluate((f: HTMLFormElement) => f.noValidate)).toBe(true);
    await form.locator("button[type=submit]").click();
    await form.locator('[data-issue-for="file"]', { hasText: "file is required" }).waitFor();
    expect(await focused()).toBe("input[name=file]");

    await form
      .locator("input[type=file]")
      .setInputFiles({ name: "tool.exe", mimeType: "application/x-msdownload", buffer: Buffer.from("MZ") });
    await form.locator("button[type=submit]").click();
    await form.locator('[data-issue-for="file"]', { hasText: "That type of file is not accepted." }).waitFor();

    const name = `Minutes ${LONG_WORD}.txt`;
    await form.locator("input[type=file]").setInputFiles({ name, mimeType: "text/plain", buffer: Buffer.from("minutes") });
    await form.locator("button[type=submit]").click();
    await page.locator("#uploads li").first().filter({ hasText: name }).waitFor();
    expect(await form.locator('[data-issue-for="file"]').textContent()).toBe("");

    await page.reload();
    await page.locator("#uploads li").nth(19).waitFor();
    expect(await page.locator("#uploads li strong").first().textContent()).toBe(name);
    await page.locator("#uploads-more").click();
    await page.locator("#uploads li").nth(39).waitFor();
    await checkPage(page, "upload holding long file names", "upload");

    const row = page.locator("#uploads li", { hasText: name });
    const id = (await row.getAttribute("data-upload-id")) ?? "";
    await row.getByRole("button", { name: `Delete ${name}` }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Delete" }).click();
    await row.waitFor({ state: "detached" });
    await page.reload();
    await page.locator("#uploads li").nth(19).waitFor();
    expect(await page.locator("#uploads li", { hasText: name }).count()).toBe(0);
    const gone = await fetch(`${env.baseUrl}/api/uploads/${id}`, {
      headers: { authorization: `Bearer ${(await storedToken(page)) ?? ""}` },
    });
    expect(gone.status).toBe(404);
  });

  it("account, sessions and settings hold a long name and 46 sessions from devices with long names", async () => {
    await page.locator("#nav-account").click();
    const profile = page.locator("#profile-form");
    await profile.locator("input[name=name]").fill(`Lin ${LONG_WORD} Müller-Lüdenscheidt`);
    await profile.locator("button[type=submit]").click();
    await page.locator("#notice", { hasText: "Your name is saved." }).waitFor();
    await checkPage(page, "account with a long name");
    // Identity keeps at most 50 sessions per user (the oldest, this browser's, would go first).
    const devices = 45;
    await times(devices, async (i) => {
      const res = await fetch(`${env.baseUrl}/api/auth/sign-in/email`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "user-agent": `Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) ${LONG_WORD}Browser/${i}.0.0.0 Safari/537.36`,
        },
        body: JSON.stringify({ email, password: PASSWORD }),
      });
      expect(res.status).toBe(200);
    });
    await page.goto(`${env.webUrl}/#/sessions`);
    await page.locator("#sessions li").nth(devices).waitFor();
    await checkPage(page, "sessions holding many devices");
    await page.locator("#nav-settings").click();
    await page.locator("#developer-settings summary").click();
    await checkPage(page, "settings with the developer section open");
  });

  it("the development mailbox holds long links without scrolling sideways", async () => {
    const mailer = createMailer({ smtpUrl: catcher.url, from: "Accounts <no-reply@example.com>" });
    try {
      await mailer.send({
        to: email,
        subject: `Your ${LONG_WORD} export is ready`,
        text: `Hello,\n\nthe export is at ${LONG_URL}\nand the word of the day is ${LONG_WORD.repeat(3)}.\n`,
        html: "<p>Hello</p>",
      });
    } finally {
      mailer.close();
    }
    const messages = await catcher.waitFor((m) => m.subject.startsWith("Your "), 10_000).then(() => catcher.messages());
    // The page as the mailbox serves it (tools/stack/src/dev-mail.ts writes mailboxHtml's page).
    await page.goto("about:blank");
    await page.setContent(mailboxHtml(messages));
    expect(await page.locator("a", { hasText: "landing-page-copy" }).count()).toBe(1);
    await checkPage(page, "development mailbox");
    expect(problems).toEqual([]);
  });
});
