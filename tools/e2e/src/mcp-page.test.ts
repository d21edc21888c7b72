import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type E2eStack, openBrowser, STARTUP_MS, startE2eStack, TEST_MS } from "./harness.js";
import { checkPage } from "./page-checks.js";

/**
 * The MCP page against the real stack and the sample MCP server (tools/mcp-sample/src/sample-server.ts:
 * the official SDK's server behind the SDK's OAuth authorization server, which approves at once),
 * run in this process as `MCP_SAMPLE=true pnpm start` runs it: add by URL, Connect by top-level
 * navigation through the API's authorize route, the authorization server and the callback, back
 * to the page; then the tools and a call.
 */
let env: E2eStack;
let browser: Browser;
let page: Page;
const problems: string[] = [];
// A fixed address (each test file has its own database), so the screenshots do not change from run to run.
const email = "grace@example.com";
const PASSWORD = "correct horse battery";

beforeAll(async () => {
  [env, { browser, page }] = await Promise.all([startE2eStack({}, { mcpSample: true }), openBrowser()]);
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() === "error" && !message.text().startsWith("Failed to load resource")) problems.push(message.text());
  });
  await page.goto(env.webUrl);
  await page.locator("#signin-form").waitFor();
}, STARTUP_MS);
afterAll(async () => {
  await browser?.close();
  await env?.stop();
});

const row = () => page.locator("#mcp-list > li", { hasText: "Sample tools" });

describe("the MCP page, in Chromium, against the real stack and a real MCP server", { timeout: TEST_MS }, () => {
  it("adds a server by URL, connects it through its authorization server and comes back connected", async () => {
    const sampleUrl = env.stack.mcpSample?.url ?? "";
    expect(sampleUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    const signUp = page.locator("#signup-form");
    await signUp.locator("input[name=name]").fill("Grace Tester");
    await signUp.locator("input[name=email]").fill(email);
    await signUp.locator("input[name=password]").fill(PASSWORD);
    await signUp.locator("button[type=submit]").click();
    await page.locator("#task-list[data-loaded]").waitFor({ state: "attached" });

    await page.locator("#nav-mcp").click();
    const form = page.locator("#create-mcp");
    await form.locator("input[name=name]").fill("Sample tools");
    await form.locator("input[name=url]").fill(sampleUrl);
    await form.locator("button[type=submit]").click();
    await row().waitFor();
    expect(await row().locator(".status").textContent()).toBe("not connected");

    // Connect is a plain link to the API's authorize route: the browser navigates (session cookie).
    const connect = row().getByRole("link", { name: "Connect MCP server Sample tools" });
    expect(await connect.getAttribute("href")).toMatch(new RegExp(`^${env.baseUrl}/api/mcp-oauth/authorize\\?serverId=`));
    const visited: string[] = [];
    // Every hop of the top-level navigation (redirects never commit a frame, so requests are watched).
    page.on("request", (request) => {
      if (request.isNavigationRequest()) visited.push(request.url());
    });
    await connect.click();
    const outcome = page.locator('#mcp-return[data-outcome="connected"]');
    await outcome.waitFor();
    expect(await outcome.textContent()).toBe("MCP server “Sample tools” is connected.");
    // Back on the web app, the outcome left the address bar.
    expect(page.url()).toBe(`${env.webUrl}/#/mcp`);
    const origin = new URL(sampleUrl).origin;
    const hops = visited.map((url) => new URL(url)).map((url) => `${url.origin}${url.pathname}`);
    expect(hops).toEqual([
      `${env.baseUrl}/api/mcp-oauth/authorize`,
      `${origin}/authorize`,
      `${env.baseUrl}/api/mcp-oauth/callback`,
      `${env.webUrl}/`,
    ]);

    await page.locator('#mcp-list > li[data-status="connected"]').waitFor();
    expect(await row().locator(".status").textContent()).toBe("connected");
    expect(await row().locator(".expires").textContent()).toMatch(/^Access expires at /);
    expect(await row().getByRole("link").count()).toBe(0);
  });

  it("lists the tools, calls one with JSON arguments and shows its result", async () => {
    await row().locator("summary", { hasText: "Tools" }).click();
    await row().locator(".tools-body[data-loaded]").waitFor();
    const names = await row().locator(".tool > strong").allTextContents();
    expect(names.sort()).toEqual(["add", "echo", "huge", "slow"]);
    const add = row().locator('.tool[data-tool="add"]');
    expect(await add.locator(".tool-args").textContent()).toContain("a: number (required)");

    // Arguments that are not JSON: a sentence next to the field, nothing sent.
    const args = add.getByLabel("Arguments for add (JSON)");
    await args.fill("{a: 2");
    await add.getByRole("button", { name: "Call add" }).click();
    await add.locator('[data-issue-for="arguments"]', { hasText: "The arguments are not valid JSON" }).waitFor();
    expect(await args.getAttribute("aria-invalid")).toBe("true");

    await args.fill('{"a": 2, "b": 3}');
    await add.getByRole("button", { name: "Call add" }).click();
    const result = add.locator('.tool-result[data-is-error="false"]');
    await result.waitFor();
    expect(await result.locator(".tool-text").textContent()).toBe("5");
    expect(JSON.parse((await result.locator(".tool-structured").textContent()) ?? "")).toEqual({ sum: 5 });
    expect(await args.getAttribute("aria-invalid")).toBeNull();

    const echo = row().locator('.tool[data-tool="echo"]');
    await echo.getByLabel("Arguments for echo (JSON)").fill('{"text": "hello from Chromium"}');
    await echo.getByRole("button", { name: "Call echo" }).click();
    await echo.locator(".tool-text", { hasText: "hello from Chromium" }).waitFor();

    await checkPage(page, "MCP page with a connected server and a tool result", "mcp-connected");
    expect(await page.locator("body").textContent()).not.toMatch(/mcp_[a-z_]+/);
  });

  it("a server that revokes its tokens asks for Reconnect, which connects it again", async () => {
    env.stack.mcpSample?.revokeTokens();
    const echo = row().locator('.tool[data-tool="echo"]');
    await echo.getByRole("button", { name: "Call echo" }).click();
    await page.locator("#alert", { hasText: "The MCP server no longer accepts this connection. Connect it again." }).waitFor();
    await page.locator('#mcp-list > li[data-status="needs_reconnect"]').waitFor();
    expect(await row().locator(".status").textContent()).toBe("needs reconnecting");
    expect(await row().locator(".expires").count()).toBe(0);
    await checkPage(page, "MCP page with a server to reconnect");

    await row().getByRole("link", { name: "Reconnect MCP server Sample tools" }).click();
    await page.locator('#mcp-return[data-outcome="connected"]').waitFor();
    await page.locator('#mcp-list > li[data-status="connected"]').waitFor();
    await row().locator("summary", { hasText: "Tools" }).click();
    const add = row().locator('.tool[data-tool="add"]');
    await add.getByLabel("Arguments for add (JSON)").fill('{"a": 40, "b": 2}');
    await add.getByRole("button", { name: "Call add" }).click();
    await add.locator(".tool-text", { hasText: "42" }).waitFor();
  });

  it("deletes the server after the confirmation dialog", async () => {
    await row().getByRole("button", { name: "Delete MCP server Sample tools" }).click();
    const dialog = page.getByRole("dialog");
    await dialog.getByRole("button", { name: "Delete" }).click();
    await page.locator("#mcp-list-empty:not([hidden])").waitFor();
    expect(problems).toEqual([]);
  });
});
