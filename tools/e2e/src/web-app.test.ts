import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type E2eStack, grantRole, openBrowser, STARTUP_MS, screenshot, startE2eStack, storedToken, TEST_MS } from "./harness.js";
import { checkPage } from "./page-checks.js";

let env: E2eStack;
let browser: Browser;
let page: Page;
const sockets: string[] = [];
/** Uncaught page errors and console errors (a CSP violation shows up here). */
const problems: string[] = [];
// A fixed address (each test file has its own database), so the screenshots do not change from run to run.
const email = "grace@example.com";
let taskId = "";

beforeAll(async () => {
  [env, { browser, page }] = await Promise.all([startE2eStack(), openBrowser()]);
  page.on("websocket", (ws) => sockets.push(ws.url()));
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() === "error" && !message.text().startsWith("Failed to load resource")) problems.push(message.text());
  });
  await page.goto(env.webUrl);
  await page.locator("#signup-form input[name=name]").fill("Web Tester");
  await page.locator("#signup-form input[name=email]").fill(email);
  await page.locator("#signup-form input[name=password]").fill("correct horse battery");
  await page.locator("#signup-form button[type=submit]").click();
  await page.locator("#task-list[data-loaded]").waitFor({ state: "attached" });
}, STARTUP_MS);
afterAll(async () => {
  await browser?.close();
  await env?.stop();
});

/** Posts a task message from outside the browser, with the JWT the page stored. */
async function postFromOutside(text: string): Promise<void> {
  const token = await storedToken(page);
  const res = await fetch(`${env.baseUrl}/api/tasks/${taskId}/messages`, {
    method: "POST",
    headers: { authorization: `Bearer ${token ?? ""}`, "content-type": "application/json" },
    body: JSON.stringify({ text }),
  });
  expect(res.status).toBe(201);
}

const messageTexts = () => page.locator("#messages li.message p").allTextContents();

describe("the web app against the real services", { timeout: TEST_MS }, () => {
  it("lists and creates tasks", async () => {
    for (const title of ["Write the report", "Review <b>markup</b> & co"]) {
      await page.locator("#create-task input[name=title]").fill(title);
      await page.locator("#create-task button[type=submit]").click();
      await page.locator("#task-list li.task a", { hasText: title }).waitFor();
    }
    await page.reload();
    await page.locator("#task-list li.task").nth(1).waitFor();
    const titles = await page.locator("#task-list li.task a").allTextContents();
    expect(titles).toEqual(["Review <b>markup</b> & co", "Write the report"]); // newest first, text not HTML
    taskId = (await page.locator("#task-list li.task").last().getAttribute("data-task-id")) ?? "";
    expect(taskId).not.toBe("");
    await screenshot(page, "03-tasks");
    await checkPage(page, "tasks with items");
  });

  it("shows a task's messages arriving live over SSE, attachments included", async () => {
    await page.locator("#task-list li.task a", { hasText: "Write the report" }).click();
    await page.locator("#live-status[data-state=live]").waitFor();
    expect(await page.locator("#live-status").textContent()).toBe("live (SSE)");
    await postFromOutside("posted from elsewhere");
    await page.locator("#messages li.message", { hasText: "posted from elsewhere" }).waitFor();

    await page.locator("#message-form textarea[name=text]").fill("with a file");
    await page
      .locator("#message-form input[type=file]")
      .setInputFiles({ name: "notes.txt", mimeType: "text/plain", buffer: Buffer.from("hello") });
    await page.locator("#message-form button[type=submit]").click();
    await page.locator("#messages li.message", { hasText: "with a file" }).locator("a.attachment", { hasText: "notes.txt" }).waitFor();
    expect(await messageTexts()).toEqual(["posted from elsewhere", "with a file"]);
    expect(sockets).toEqual([]);
    await screenshot(page, "04-task-live-sse");
    await checkPage(page, "task", "task");
  });

  it("switches to the WebSocket (?token=) in Settings > Developer, replays the log and keeps receiving live", async () => {
    const taskUrl = page.url();
    await page.locator("#nav-settings").click();
    await page.locator("#developer-settings summary").click();
    await page.locator("#transport-ws").check();
    await page.goto(taskUrl);
    await page.locator("#live-status[data-state=live]").waitFor();
    expect(await page.locator("#live-status").textContent()).toBe("live (WebSocket)");
    expect(sockets).toHaveLength(1);
    const wsUrl = new URL(sockets[0] ?? "");
    expect(`${wsUrl.host}${wsUrl.pathname}`).toBe(`${new URL(env.baseUrl).host}/api/ws`);
    expect(wsUrl.searchParams.get("token")).toBe(await storedToken(page));
    await page.locator("#messages li.message").nth(1).waitFor();
    await postFromOutside("over the socket");
    await page.locator("#messages li.message", { hasText: "over the socket" }).waitFor();
    expect(await messageTexts()).toEqual(["posted from elsewhere", "with a file", "over the socket"]);

    await page.locator("#task-status").selectOption("completed");
    await page.waitForFunction(() => (document.querySelector("#task-status") as HTMLSelectElement | null)?.value === "completed");
    await screenshot(page, "05-task-live-websocket");
  });

  it("uploads a file as multipart", async () => {
    await page.locator("#nav-upload").click();
    await page.locator("#upload-form input[type=file]").setInputFiles({
      name: "data.csv",
      mimeType: "text/csv",
      buffer: Buffer.from("a,b\n1,2\n"),
    });
    await page.locator("#upload-form button[type=submit]").click();
    const row = page.locator("#uploads li", { hasText: "data.csv" });
    await row.waitFor();
    expect(await row.locator("strong").textContent()).toBe("data.csv");
    expect(await row.locator("p").textContent()).toMatch(/^text\/csv · 8 B · .+ · SHA-256 [0-9a-f]{16}$/);
    await screenshot(page, "06-upload");
    await checkPage(page, "upload", "upload");
  });

  it("streams a text generation", async () => {
    await page.locator("#nav-generate").click();
    await page.locator("#generate-form textarea[name=prompt]").fill("hello from the browser");
    await page.locator("#generate-form button[type=submit]").click();
    await page.locator("#generate-status[data-state=done]").waitFor();
    expect(await page.locator("#generate-output").textContent()).toBe("Local echo: hello from the browser");
    expect(await page.locator("#generate-status").textContent()).toBe("Done.");
    expect(await page.locator("#generate-provider").textContent()).toBe("Answered by the “local” provider.");
    await screenshot(page, "07-generate");
    await checkPage(page, "generate", "generate");
  });

  it("the admin page: no link and refused for a plain user; users and roles (from a select) for an admin", async () => {
    expect(await page.locator("#nav-admin").count()).toBe(0);
    await page.goto(`${env.webUrl}/#/admin`);
    await page.locator("#admin-forbidden").waitFor();
    await checkPage(page, "admin refused");
    await grantRole(env.database.url, email, "admin");
    await page.reload();
    await page.locator("#nav-admin").waitFor();
    const row = page.locator("#admin-users li", { hasText: email });
    await row.waitFor();
    expect(await row.locator(".roles").textContent()).toBe("admin");
    const select = row.locator("select[name=roles]");
    expect(await select.evaluate((s: HTMLSelectElement) => [...s.selectedOptions].map((o) => o.value))).toEqual(["admin"]);
    await screenshot(page, "08-admin");
  });

  it("signs out: the token is removed and the sign-in page is back", async () => {
    await page.locator("#sign-out").click();
    await page.locator("#signin-form").waitFor();
    expect(await storedToken(page)).toBeNull();
    expect(problems).toEqual([]);
  });
});
