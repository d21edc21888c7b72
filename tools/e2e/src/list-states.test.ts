import type { Browser, Page, Route } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type E2eStack, openBrowser, STARTUP_MS, startE2eStack, storedToken, TEST_MS } from "./harness.js";
import { checkPage } from "./page-checks.js";
import { seeder, times } from "./seed.js";

// What a list says while it loads, when it is empty and when it cannot load, and what a 429 says,
// in Chromium against a real stack. The network is cut in the browser itself (a request aborted
// as a lost connection would be); every answer that does arrive is the real service's.
let env: E2eStack;
let browser: Browser;
let page: Page;
const email = "kim@example.com";
const PASSWORD = "correct horse battery";
const PROJECTS = /\/api\/projects(\?.*)?$/;

beforeAll(async () => {
  // Two failed sign-ins per account and address, then 429 with Retry-After (no slow-down first).
  [env, { browser, page }] = await Promise.all([
    startE2eStack({ RATE_LIMIT_ACCOUNT_MAX: "2", RATE_LIMIT_ACCOUNT_DELAY_AFTER: "100" }),
    openBrowser(),
  ]);
  await page.goto(env.webUrl);
  await page.locator("#signup-form input[name=name]").fill("Kim States");
  await page.locator("#signup-form input[name=email]").fill(email);
  await page.locator("#signup-form input[name=password]").fill(PASSWORD);
  await page.locator("#signup-form button[type=submit]").click();
  await page.locator("#task-list[data-loaded]").waitFor({ state: "attached" });
}, STARTUP_MS);
afterAll(async () => {
  await browser?.close();
  await env?.stop();
});

const state = () => page.locator("#project-list").evaluate((list) => list.parentElement?.dataset.state);

describe("lists say what is happening; a 429 says how long to wait", { timeout: TEST_MS * 2 }, () => {
  it("a list says it is loading until its first page arrives, then that it is empty", async () => {
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    await page.route(PROJECTS, async (route: Route) => {
      await held;
      await route.continue();
    });
    await page.locator("#nav-projects").click();
    await page.locator("#project-list-loading", { hasText: "Loading…" }).waitFor();
    expect(await state()).toBe("loading");
    expect(await page.locator("#project-list-empty").isHidden()).toBe(true);
    await checkPage(page, "a list while it loads");
    release();
    await page.locator("#project-list-empty:not([hidden])", { hasText: "No projects yet" }).waitFor();
    expect(await state()).toBe("empty");
    expect(await page.locator("#project-list-loading").isHidden()).toBe(true);
    await page.unroute(PROJECTS);
  });

  it("a list that cannot load says why and loads with Try again; so does a failed Load more", async () => {
    const seed = seeder(env.baseUrl, () => storedToken(page));
    await times(25, (i) => seed.post("/api/projects", { name: `Project ${String(i).padStart(2, "0")}` }));
    await page.route(PROJECTS, (route: Route) => route.abort("internetdisconnected"));
    await page.reload();
    const failure = page.locator("#project-list-error:not([hidden])");
    await failure.waitFor();
    expect(await failure.locator("p").textContent()).toBe("The service cannot be reached. Check your connection and try again.");
    expect(await state()).toBe("error");
    expect(await page.locator("#alert").isHidden()).toBe(true);
    await checkPage(page, "a list that could not load");
    await page.unroute(PROJECTS);
    await failure.getByRole("button", { name: "Try again" }).click();
    await page.locator("#project-list li").nth(19).waitFor();
    expect(await state()).toBe("ready");
    expect(await page.locator("#project-list-error").isHidden()).toBe(true);

    await page.route(/\/api\/projects\?.*cursor=/, (route: Route) => route.abort("internetdisconnected"));
    await page.locator("#project-list-more").click();
    await failure.waitFor();
    expect(await page.locator("#project-list li").count()).toBe(20);
    await page.unroute(/\/api\/projects\?.*cursor=/);
    await failure.getByRole("button", { name: "Try again" }).click();
    await page.locator("#project-list li").nth(24).waitFor();
    expect(await page.locator("#project-list li").last().textContent()).toContain("Project 01");
    expect(await state()).toBe("ready");
  });

  it("an empty form puts focus on its first invalid field in document order, not the service's order", async () => {
    const context = await browser.newContext();
    try {
      const other = await context.newPage();
      await other.goto(env.webUrl);
      const form = other.locator("#signup-form");
      await form.locator("button[type=submit]").click();
      // The service lists email, password, then name (packages/contracts/src/auth.ts); the form shows name first.
      await form.locator('[data-issue-for="name"]:not(:empty)').waitFor();
      expect(await form.locator('[aria-invalid="true"]').evaluateAll((els) => els.map((el) => el.getAttribute("name")))).toEqual([
        "name",
        "email",
        "password",
      ]);
      expect(await other.evaluate(() => document.activeElement?.getAttribute("name"))).toBe("name");
    } finally {
      await context.close();
    }
  });

  it("a 429 names the wait its Retry-After gives", async () => {
    const context = await browser.newContext();
    try {
      const other = await context.newPage();
      await other.goto(env.webUrl);
      const form = other.locator("#signin-form");
      const summary = form.locator(".form-error");
      for (let attempt = 1; attempt <= 3; attempt += 1) {
        await form.locator("input[name=email]").fill(email);
        await form.locator("input[name=password]").fill("not the password");
        await form.locator("button[type=submit]").click();
        await summary.filter({ hasText: attempt < 3 ? "do not match" : "Too many attempts" }).waitFor();
        await summary.evaluate((el) => {
          el.textContent = "";
        });
      }
      await form.locator("button[type=submit]").click();
      await summary.filter({ hasText: "Too many attempts" }).waitFor();
      // RATE_LIMIT_ACCOUNT_WINDOW_MS is 15 minutes by default: the wait left is under that.
      expect(await summary.textContent()).toMatch(/^Too many attempts\. Try again in (1[0-5]|[1-9]) minutes\.$/);
    } finally {
      await context.close();
    }
  });
});
