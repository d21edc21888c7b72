import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type E2eStack, grantRole, openBrowser, pageFetch, STARTUP_MS, startE2eStack, storedToken, TEST_MS, WAIT_MS } from "./harness.js";
import { checkPage } from "./page-checks.js";
import { signInThroughPage } from "./two-browsers.js";

// The admin's user pages in Chromium against the real stack: an admin (the API's `admin` role,
// granted in user_role as `pnpm admin:grant` does) finds a user, suspends them (their sign-in then
// shows the suspended sentence), lifts it, and acts as them with a banner on every page until
// "Stop impersonating" brings the admin back.
let env: E2eStack;
let browser: Browser;
let page: Page;
/** Uncaught page errors and console errors (a CSP violation shows up here). */
const problems: string[] = [];
// Fixed addresses (each test file has its own database), so the screenshots do not change between runs.
const ADMIN = "grace@example.com";
const USER = "linus@example.com";
const PASSWORD = "correct horse battery";
/** The sentence of messages.ts for the `banned` code. */
const SUSPENDED = "This account is suspended. Contact the operator of this service.";
/** JWT_EXPIRES_IN of the stack: the shortest identity accepts. */
const JWT_SECONDS = 60;

beforeAll(async () => {
  // Short JWTs, as an operator who suspends users picks them; session checks rare, so the page
  // meets its expired JWT on a call of its own (the last test).
  [env, { browser, page }] = await Promise.all([
    startE2eStack({ JWT_EXPIRES_IN: `${JWT_SECONDS}s`, SESSION_RECHECK_SECONDS: "3600" }),
    openBrowser(),
  ]);
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() === "error" && !message.text().startsWith("Failed to load resource")) problems.push(message.text());
  });
  // Both accounts exist before the pages are used: the user's through the service, the admin's too.
  for (const [email, name] of [
    [USER, "Linus Torvalds"],
    [ADMIN, "Grace Hopper"],
  ]) {
    const res = await fetch(`${env.baseUrl}/api/auth/sign-up/email`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email, password: PASSWORD, name }),
    });
    expect(res.status).toBe(200);
  }
  await grantRole(env.database.url, ADMIN, "admin");
}, STARTUP_MS);
afterAll(async () => {
  await browser?.close();
  await env?.stop();
});

/** Signs in with the form in a browser of its own; answers the page, or the form's error. */
async function signInElsewhere(email: string): Promise<{ close(): Promise<void>; page: Page }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  context.setDefaultTimeout(WAIT_MS);
  const other = await context.newPage();
  await other.goto(env.webUrl);
  await other.locator("#signin-form input[name=email]").fill(email);
  await other.locator("#signin-form input[name=password]").fill(PASSWORD);
  await other.locator("#signin-form button[type=submit]").click();
  return { page: other, close: () => context.close() };
}

const userRow = () => page.locator("#user-search-list li", { hasText: USER });

describe("admin user pages in Chromium, against the real stack", { timeout: TEST_MS }, () => {
  it("an admin finds a user by searching and opens their page", async () => {
    await signInThroughPage(page, env.webUrl, ADMIN, PASSWORD);
    await page.locator("#nav-admin").click();
    await page.locator("#admin-nav-users").click();
    await page.locator("#user-search-body[data-state=ready]").waitFor();
    expect(await page.locator("#user-search-summary").textContent()).toBe("Users 1–2 of 2.");
    await page.locator("#user-search input[name=q]").fill("linus");
    await page.locator("#user-search button[type=submit]").click();
    await page.locator("#user-search-summary", { hasText: "matching “linus”" }).waitFor();
    expect(await page.locator("#user-search-list li").count()).toBe(1);
    await checkPage(page, "admin: users", "admin-users");
    await userRow()
      .getByRole("link", { name: `Manage ${USER}` })
      .click();
    await page.locator("#admin-user-body[data-state=ready]").waitFor();
    expect(await page.locator("h1").textContent()).toBe("Linus Torvalds");
    expect(await page.locator("#user-ban-status").textContent()).toBe("Active: the account can sign in.");
    await checkPage(page, "admin: a user", "admin-user");
  });

  it("suspending ends the user's sessions and their sign-in shows the suspended sentence; lifting it lets them in", async () => {
    const signedIn = await signInElsewhere(USER);
    await signedIn.page.locator("#task-list[data-loaded]").waitFor({ state: "attached" });
    await page.reload();
    await page.locator("#user-session-list li").first().waitFor();
    // Signing up opened one session, the browser another.
    expect(await page.locator("#user-session-list li").count()).toBe(2);

    await page.locator("#ban-form input[name=reason]").fill("Posting spam in shared projects");
    await page.locator("#ban-form select[name=length]").selectOption({ label: "1 day" });
    await page.locator("#ban-form button[type=submit]").click();
    await page.locator("#confirm-ok").click();
    await page.locator("#admin-user-body[data-banned=true]").waitFor();
    expect(await page.locator("#user-ban-status").textContent()).toMatch(
      /^Suspended until .+\. Reason: Posting spam in shared projects\.$/,
    );
    expect(await page.locator("#user-session-list li").count()).toBe(0);
    await checkPage(page, "admin: a suspended user", "admin-user-suspended");
    // Their session is over at identity: the next check there finds none.
    const check = await pageFetch(signedIn.page, `${env.baseUrl}/api/auth/get-session`, { credentials: "include" });
    expect(JSON.parse(check.body)).toBeNull();
    await signedIn.close();

    const refused = await signInElsewhere(USER);
    await refused.page.locator("#signin-form .form-error", { hasText: SUSPENDED }).waitFor();
    expect(await storedToken(refused.page)).toBeNull();
    await checkPage(refused.page, "sign-in of a suspended user");
    await refused.close();

    await page.locator("#unban-user").click();
    await page.locator("#admin-user-body[data-banned=false]").waitFor();
    const again = await signInElsewhere(USER);
    await again.page.locator("#task-list[data-loaded]").waitFor({ state: "attached" });
    await again.close();
  });

  it("acting as the user shows a banner on every page; Stop impersonating brings the admin back", async () => {
    await page.locator("#impersonate-user").click();
    await page.locator("#impersonation-banner:not([hidden])").waitFor();
    await page.locator("#task-list[data-loaded]").waitFor({ state: "attached" });
    expect(await page.locator("#whoami").textContent()).toBe(USER);
    expect(await page.locator("#impersonation-text").textContent()).toBe(
      `You are acting as Linus Torvalds (${USER}): everything you do here is done as this user.`,
    );
    expect(await page.locator("#nav-admin").count()).toBe(0); // the user is no admin
    // The API sees the user, with the admin as the actor.
    const token = await storedToken(page);
    const me = await pageFetch(page, `${env.baseUrl}/api/me`, { headers: { authorization: `Bearer ${token}` }, credentials: "omit" });
    expect(JSON.parse(me.body)).toMatchObject({ data: { email: USER } });
    await checkPage(page, "tasks while impersonating", "impersonating");
    await page.locator("#nav-projects").click();
    await page.locator("#impersonation-banner:not([hidden])").waitFor();
    // A reload keeps acting as the user: the session says so.
    await page.reload();
    await page.locator("#impersonation-banner:not([hidden])").waitFor();

    await page.locator("#stop-impersonating").click();
    await page.locator("#admin-user-body[data-state=ready]").waitFor();
    await page.locator("#notice", { hasText: "You are yourself again" }).waitFor();
    expect(await page.locator("#impersonation-banner").isHidden()).toBe(true);
    expect(await page.locator("#whoami").textContent()).toBe(ADMIN);
    await page.locator("#nav-admin").waitFor();
    expect(problems).toEqual([]);
  });

  it("past its JWT's life the page goes on: its next call meets 401, gets a fresh JWT through get-session once and is sent again", {
    timeout: (JWT_SECONDS + 60) * 1000,
  }, async () => {
    const token = (await storedToken(page)) ?? "";
    const status = async () =>
      (await pageFetch(page, `${env.baseUrl}/api/me`, { headers: { authorization: `Bearer ${token}` }, credentials: "omit" })).status;
    await expect.poll(status, { timeout: (JWT_SECONDS + 30) * 1000, interval: 1000 }).toBe(401);
    expect(await storedToken(page)).toBe(token); // no session check replaced it meanwhile
    const calls: string[] = [];
    page.on("request", (request) => {
      const path = new URL(request.url()).pathname;
      if (path === "/api/auth/get-session" || path === "/api/projects") calls.push(`${request.method()} ${path}`);
    });
    await page.locator("#nav-projects").click();
    await page.locator("#project-list-empty").waitFor();
    expect(calls.filter((c) => c !== "OPTIONS /api/projects" && c !== "OPTIONS /api/auth/get-session")).toEqual([
      "GET /api/projects",
      "POST /api/auth/get-session",
      "GET /api/projects",
    ]);
    expect(await page.locator("#whoami").textContent()).toBe(ADMIN);
    const fresh = await storedToken(page);
    expect(fresh).not.toBe(token);
    expect(await page.locator("#alert").isHidden()).toBe(true);
    expect(problems).toEqual([]);
  });
});
