import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type E2eStack, grantRole, openBrowser, STARTUP_MS, startE2eStack, TEST_MS } from "./harness.js";
import { checkPage } from "./page-checks.js";
import { signInThroughPage } from "./two-browsers.js";

// The security event log's pages in Chromium against the real stack: the user's Account →
// Security activity (a page of their own events, then "Load more"), and the admins' Security
// events with filters; each page checked at 390×844 and 1280×800 with axe (page-checks.ts).
let env: E2eStack;
let browser: Browser;
let page: Page;
/** Uncaught page errors and console errors (a CSP violation shows up here). */
const problems: string[] = [];
// Fixed addresses (each test file has its own database), so the screenshots do not change between runs.
const ADMIN = "hedy@example.com";
const USER = "alan@example.com";
const PASSWORD = "correct horse battery";
/** Events per page of the list (SECURITY_EVENTS_PAGE_SIZE). */
const PAGE_SIZE = 50;

/** What identity answers a JSON request from outside the browser. */
async function post(path: string, body: unknown, cookie = ""): Promise<Response> {
  return fetch(`${env.baseUrl}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(cookie ? { cookie } : {}) },
    body: JSON.stringify(body),
  });
}

beforeAll(async () => {
  [env, { browser, page }] = await Promise.all([startE2eStack(), openBrowser()]);
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() === "error" && !message.text().startsWith("Failed to load resource")) problems.push(message.text());
  });
  for (const [email, name] of [
    [USER, "Alan Turing"],
    [ADMIN, "Hedy Lamarr"],
  ]) {
    expect((await post("/api/auth/sign-up/email", { email, password: PASSWORD, name })).status).toBe(200);
  }
  await grantRole(env.database.url, ADMIN, "admin");
  // More history than one page: an admin gives and takes the admin role again and again (two
  // events each time), then ends the user's sessions.
  const admin = await post("/api/auth/sign-in/email", { email: ADMIN, password: PASSWORD });
  const cookie = admin.headers
    .getSetCookie()
    .map((line) => line.split(";")[0])
    .join("; ");
  const signedIn = await post("/api/auth/sign-in/email", { email: USER, password: PASSWORD });
  const userId = ((await signedIn.json()) as { user: { id: string } }).user.id;
  for (let i = 0; i < PAGE_SIZE / 2 + 1; i += 1) {
    for (const role of ["admin", "user"]) expect((await post("/api/auth/admin/set-role", { userId, role }, cookie)).status).toBe(200);
  }
  expect((await post("/api/auth/admin/revoke-user-sessions", { userId }, cookie)).status).toBe(200);
}, STARTUP_MS);
afterAll(async () => {
  await browser?.close();
  await env?.stop();
});

describe("security activity and security events in Chromium, against the real stack", { timeout: TEST_MS }, () => {
  it("the user reads their own activity from the account page, newest first, a page at a time", async () => {
    await signInThroughPage(page, env.webUrl, USER, PASSWORD);
    await page.goto(`${env.webUrl}/#/account`);
    await page.locator("#account-activity-link").click();
    await page.locator("#activity[data-loaded]").waitFor({ state: "attached" });
    expect(await page.locator("h1").textContent()).toBe("Security activity");
    const rows = page.locator("#activity > li");
    expect(await rows.count()).toBe(PAGE_SIZE);
    // The admin's action is the newest of the history before this sign-in, marked as an admin's.
    const revoked = page.locator('#activity > li[data-type="session_revoked"]').first();
    expect(await revoked.locator("strong").textContent()).toMatch(/^Signed out of \d+ sessions?$/);
    expect(await revoked.textContent()).toContain("by an admin");
    await checkPage(page, "security activity", "activity");
    await page.locator("#activity-more").click();
    await page.waitForFunction((size) => document.querySelectorAll("#activity > li").length > size, PAGE_SIZE);
    expect(await page.locator('#activity > li[data-type="role_changed"] strong', { hasText: "Admin role given" }).count()).toBeGreaterThan(
      0,
    );
    expect(problems).toEqual([]);
  });

  it("an admin filters everyone's events; a user without the admin role is told the page is not theirs", async () => {
    await page.goto(`${env.webUrl}/#/admin/events`);
    await page.locator("#admin-forbidden").waitFor();
    await checkPage(page, "admin: security events refused", "admin-events-refused");

    await page.evaluate(() => localStorage.clear());
    await page.context().clearCookies();
    await signInThroughPage(page, env.webUrl, ADMIN, PASSWORD);
    await page.goto(`${env.webUrl}/#/admin/events`);
    await page.locator("#admin-events[data-loaded]").waitFor({ state: "attached" });
    expect(await page.locator("#admin-events > li").count()).toBe(PAGE_SIZE);
    await checkPage(page, "admin: security events", "admin-events");
    await page.locator("#event-filters select[name=type]").selectOption("session_revoked");
    await page.locator("#event-filters button[type=submit]").click();
    await page.waitForFunction(() => {
      const rows = [...document.querySelectorAll("#admin-events > li")];
      return rows.length > 0 && rows.every((row) => row.getAttribute("data-type") === "session_revoked");
    });
    expect(await page.locator("#admin-events > li .event-who").first().textContent()).toContain("by admin");
    await page.locator("#event-filters select[name=outcome]").selectOption("failure");
    await page.locator("#event-filters button[type=submit]").click();
    await page.locator("#admin-events-empty").waitFor();
    await checkPage(page, "admin: security events, nothing matches", "admin-events-empty");
    expect(problems).toEqual([]);
  });
});
