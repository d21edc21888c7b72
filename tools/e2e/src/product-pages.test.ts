import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type E2eStack, grantRole, openBrowser, STARTUP_MS, startE2eStack, storedToken, TEST_MS } from "./harness.js";
import { checkPage } from "./page-checks.js";
import { LONG_URL, longName, longText, longTitle, ROWS, type Seeder, seeder, times } from "./seed.js";

let env: E2eStack;
let browser: Browser;
let page: Page;
let seed: Seeder;
/** Uncaught page errors and console errors. */
const problems: string[] = [];
// A fixed address (each test file has its own database), so the screenshots do not change from run to run.
const email = "ada@example.com";
const PASSWORD = "correct horse battery";

beforeAll(async () => {
  [env, { browser, page }] = await Promise.all([startE2eStack(), openBrowser()]);
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() === "error" && !message.text().startsWith("Failed to load resource")) problems.push(message.text());
  });
  await page.goto(env.webUrl);
  await page.locator("#signin-form").waitFor();
  seed = seeder(env.baseUrl, () => storedToken(page));
}, STARTUP_MS);
afterAll(async () => {
  await browser?.close();
  await env?.stop();
});

/** A JSON call from outside the browser with the JWT the page stored. */
async function api(path: string, body: unknown): Promise<void> {
  const res = await fetch(`${env.baseUrl}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${(await storedToken(page)) ?? ""}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(201);
}

/** Signs up one more user from outside the browser (identity answers 200 with a session). */
async function signUp(name: string, address: string): Promise<void> {
  const res = await fetch(`${env.baseUrl}/api/auth/sign-up/email`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name, email: address, password: PASSWORD }),
  });
  expect(res.status).toBe(200);
}

/** Clicks a row's Delete and answers the confirmation dialog. */
async function deleteRow(listId: string, text: string, answer: "Cancel" | "Delete"): Promise<void> {
  await page
    .locator(`#${listId} li`, { hasText: text })
    .getByRole("button", { name: /^Delete/ })
    .click();
  const dialog = page.getByRole("dialog");
  await dialog.waitFor();
  expect(await page.evaluate(() => document.activeElement?.id)).toBe("confirm-cancel");
  await dialog.getByRole("button", { name: answer }).click();
  await dialog.waitFor({ state: "detached" });
}

describe("every page of the web app, in Chromium, against the real stack", { timeout: TEST_MS }, () => {
  it("sign-up shows the service's field message next to the field; sign-in works from the keyboard", async () => {
    await checkPage(page, "sign-in", "signin");
    const signUp = page.locator("#signup-form");
    await signUp.locator("input[name=name]").fill("Page Tester");
    await signUp.locator("input[name=email]").fill(email);
    await signUp.locator("input[name=password]").fill("short");
    await signUp.locator("button[type=submit]").click();
    const issue = signUp.locator('[data-issue-for="password"]');
    await issue.filter({ hasText: "password" }).waitFor();
    expect(await issue.textContent()).toBe("password must be at least 8 characters");
    expect(await signUp.locator("input[name=password]").getAttribute("aria-invalid")).toBe("true");
    expect(await page.locator("body").textContent()).not.toContain("validation_failed");
    expect(await page.locator("body").textContent()).not.toContain("invalid body");
    await checkPage(page, "sign-up with a field problem");

    await signUp.locator("input[name=password]").fill(PASSWORD);
    await signUp.locator("button[type=submit]").click();
    await page.locator("#task-list[data-loaded]").waitFor({ state: "attached" });
    await page.locator("#sign-out").click();
    await page.locator("#signin-form").waitFor();

    // Keyboard only: Tab from the top of the page reaches email, then password; Enter submits.
    await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    const focused = () => page.evaluate(() => (document.activeElement as HTMLInputElement | null)?.name ?? "");
    for (let i = 0; i < 10 && (await focused()) !== "email"; i += 1) await page.keyboard.press("Tab");
    expect(await focused()).toBe("email");
    expect(await page.evaluate(() => document.activeElement?.closest("form")?.id)).toBe("signin-form");
    const outline = await page.evaluate(() => getComputedStyle(document.activeElement as Element).outlineStyle);
    expect(outline).not.toBe("none");
    await page.keyboard.type(email);
    await page.keyboard.press("Tab");
    expect(await focused()).toBe("password");
    await page.keyboard.type(PASSWORD);
    await page.keyboard.press("Enter");
    await page.locator("#task-list[data-loaded]").waitFor({ state: "attached" });
    await times(ROWS, (i) => seed.post("/api/tasks", { title: longTitle(i) }));
    await page.reload();
    await page.locator("#task-list li").nth(19).waitFor();
    await checkPage(page, "tasks", "tasks");
  });

  it("projects: create, field problems, Load more through x-next-cursor, delete after a confirmation", async () => {
    await times(ROWS, (i) => seed.post("/api/projects", { name: longName(i), description: longText(i) }));
    for (let i = 1; i <= 21; i += 1) await api("/api/projects", { name: `Project ${String(i).padStart(2, "0")}` });
    await page.locator("#nav-projects").click();
    await page.locator("#project-list[data-loaded]").waitFor({ state: "attached" });
    expect(await page.locator("#project-list li").count()).toBe(20);
    await page.locator("#project-list-more").click();
    await page.locator("#project-list li").nth(20).waitFor();
    expect(await page.locator("#project-list li").nth(20).textContent()).toContain("Project 01");
    await page.locator("#project-list-more:not([hidden])").waitFor();

    const form = page.locator("#create-project");
    await form.locator("input[name=name]").fill("   ");
    await form.locator("button[type=submit]").click();
    await form.locator('[data-issue-for="name"]', { hasText: "name is required" }).waitFor();
    await form.locator("input[name=name]").fill("Website relaunch");
    await form.locator("textarea[name=description]").fill("New pages for spring");
    await form.locator("button[type=submit]").click();
    await page.locator("#project-list li").first().filter({ hasText: "Website relaunch" }).waitFor();
    await checkPage(page, "projects", "projects");

    // Edit in place: a refused name shows beside the field, a good one redraws the row.
    const first = page.locator("#project-list li").first();
    await first.getByRole("button", { name: "Edit project Website relaunch" }).click();
    const edit = first.locator("form.edit");
    await edit.locator("input[name=name]").fill("");
    await edit.getByRole("button", { name: "Save" }).click();
    await edit.locator('[data-issue-for="name"]', { hasText: "name is required" }).waitFor();
    await checkPage(page, "project edit form");
    await edit.locator("input[name=name]").fill("Website relaunch 2");
    await edit.getByRole("button", { name: "Save" }).click();
    await page.locator("#project-list li strong", { hasText: "Website relaunch 2" }).waitFor();
    expect(await page.locator("#project-list li form.edit").count()).toBe(0);

    // The confirmation dialog itself passes the same checks.
    await page
      .locator("#project-list li", { hasText: "Project 03" })
      .getByRole("button", { name: /^Delete/ })
      .click();
    await page.getByRole("dialog").waitFor();
    await checkPage(page, "delete confirmation");
    await page.keyboard.press("Escape");
    await page.getByRole("dialog").waitFor({ state: "detached" });
    await deleteRow("project-list", "Project 02", "Cancel");
    expect(await page.locator("#project-list li", { hasText: "Project 02" }).count()).toBe(1);
    await deleteRow("project-list", "Project 02", "Delete");
    await page.locator("#project-list li", { hasText: "Project 02" }).waitFor({ state: "detached" });
    await page.locator("#notice", { hasText: "deleted" }).waitFor();
  });

  it("agents: create one tied to a project, listed with it", async () => {
    await times(ROWS, (i) => seed.post("/api/agents", { name: longName(i), instructions: longText(i), model: `${longName(i)}-model` }));
    await page.locator("#nav-agents").click();
    const form = page.locator("#create-agent");
    await form.locator("select[name=projectId] option", { hasText: "Website relaunch 2" }).waitFor({ state: "attached" });
    await form.locator("input[name=name]").fill("Copy editor");
    await form.locator("textarea[name=instructions]").fill("Answer in one short paragraph.");
    await form.locator("select[name=projectId]").selectOption({ label: "Website relaunch 2" });
    await form.locator("button[type=submit]").click();
    await page.locator("#agent-list li", { hasText: "Copy editor" }).waitFor();
    expect(await page.locator("#agent-list li").first().textContent()).toContain("project Website relaunch 2");
    await page.getByRole("button", { name: "Edit agent Copy editor" }).click();
    await page.locator("#agent-list form.edit input[name=model]").fill("gpt-test");
    await page.locator("#agent-list form.edit").getByRole("button", { name: "Save" }).click();
    await page.locator("#agent-list li", { hasText: "model gpt-test" }).waitFor();
    await checkPage(page, "agents", "agents");
  });

  it("chats: start one with the agent, send a message, watch the answer stream in and stay", async () => {
    await times(ROWS, (i) => seed.post("/api/chats", { title: longName(i) }));
    await page.locator("#nav-chats").click();
    const form = page.locator("#create-chat");
    await form.locator("select[name=agentId] option", { hasText: "Copy editor" }).waitFor({ state: "attached" });
    await form.locator("input[name=title]").fill("Spring copy");
    await form.locator("select[name=agentId]").selectOption({ label: "Copy editor" });
    await form.locator("button[type=submit]").click();
    await page.locator("#chat-title", { hasText: "Spring copy" }).waitFor();
    await page.getByRole("button", { name: "Rename this chat" }).click();
    await page.locator("form.edit input[name=title]").fill("Spring copy, take two");
    await page.locator("form.edit input[name=title]").press("Enter");
    await page.locator("#chat-title", { hasText: "Spring copy, take two" }).waitFor();
    await page.locator("form.edit").waitFor({ state: "detached" });

    await page.locator("#chat-form textarea[name=content]").fill("hello chat");
    await page.locator("#chat-form button[type=submit]").click();
    await page.locator("#chat-messages li[data-role=assistant][data-id]").waitFor();
    expect(await page.locator("#chat-messages li p").allTextContents()).toEqual(["hello chat", "Local echo: hello chat"]);
    expect(await page.locator("#chat-provider").textContent()).toBe("Answered by the “local” provider.");
    await checkPage(page, "chat", "chat");

    // The same chat holding a long conversation: long words, URLs, more than one page.
    const chatId = new URL(page.url()).hash.split("/")[2] ?? "";
    await times(ROWS, (i) => seed.post(`/api/chats/${chatId}/messages`, { role: i % 2 ? "user" : "assistant", content: longText(i) }));
    await page.reload();
    await page.locator("#chat-messages li").nth(49).waitFor();
    expect(await page.locator("#chat-messages li p").nth(0).textContent()).toBe("hello chat");
    expect(await page.locator("#chat-messages li p").nth(1).textContent()).toBe("Local echo: hello chat");
    await checkPage(page, "chat with a long conversation");
    await page.locator("#nav-chats").click();
    await page.locator("#chat-list li", { hasText: "Spring copy" }).waitFor();
    await checkPage(page, "chats", "chats");
    await deleteRow("chat-list", "Spring copy", "Delete");
    await page.locator("#chat-list li", { hasText: "Spring copy" }).waitFor({ state: "detached" });
  });

  it("MCP servers: add (a bad URL gets a sentence), list, delete; the connect section is there", async () => {
    await times(ROWS, (i) => seed.post("/api/mcp-servers", { name: longName(i), url: `${LONG_URL}&server=${i}` }));
    await page.locator("#nav-mcp").click();
    const form = page.locator("#create-mcp");
    await form.locator("input[name=name]").fill("Docs");
    await form.locator("input[name=url]").fill("ftp://docs.example.com");
    await form.locator("button[type=submit]").click();
    await form.locator('[data-issue-for="url"]', { hasText: "must be an http(s) URL" }).waitFor();
    await form.locator("input[name=url]").fill("https://mcp.example.com/mcp");
    await form.locator("button[type=submit]").click();
    await page.locator("#mcp-list li", { hasText: "https://mcp.example.com/mcp" }).waitFor();
    expect(await page.locator("#mcp-connect h2").textContent()).toBe("Connect a server");
    await checkPage(page, "mcp", "mcp");
    await deleteRow("mcp-list", "mcp.example.com", "Delete");
    await page.locator("#mcp-list li", { hasText: "mcp.example.com" }).waitFor({ state: "detached" });
  });

  it("settings keeps the transport switch under Developer; the Admin link shows only to admins, roles from a select", async () => {
    await page.locator("#nav-settings").click();
    expect(await page.locator("#developer-settings").getAttribute("open")).toBeNull();
    await checkPage(page, "settings", "settings");
    expect(await page.locator("#nav-admin").count()).toBe(0);

    await grantRole(env.database.url, email, "admin");
    await times(ROWS, (i) =>
      signUp(`${longName(i)} Müller-Lüdenscheidt`, `spring-relaunch-team-member-${i}@subdomain.example-company-with-a-long-name.com`),
    );
    await page.reload();
    await page.locator("#nav-admin").click();
    const row = page.locator("#admin-users li", { hasText: email });
    await page.locator("#admin-users li").nth(49).waitFor();
    const more = page.locator("#admin-users-more:not([hidden])");
    if ((await row.count()) === 0 && (await more.count()) > 0) await more.click();
    await row.waitFor();
    expect(await row.locator("select[name=roles] option").allTextContents()).toContain("admin");
    await checkPage(page, "admin", "admin");
    expect(problems).toEqual([]);
  });
});
