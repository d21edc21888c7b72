import { type MailCatcher, startMailCatcher } from "@app/mailer/catcher";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type E2eStack, openBrowser, STARTUP_MS, startE2eStack, TEST_MS } from "./harness.js";
import { checkPage } from "./page-checks.js";

// Issue 21 in Chromium: a verification link without a callbackURL of its own (a sign-up from
// curl, as in the README: the link's callback is the service's base, whose GET / answers a 404
// envelope) lands on identity's page saying the address is verified, with Continue to the web
// app; opened again, the page says it is verified already. The links come from a real SMTP
// catcher; nothing here is signed in to identity when a link is opened.
let catcher: MailCatcher;
let env: E2eStack;
let browser: Browser;
let context: BrowserContext;
let page: Page;
/** Uncaught page errors and console errors (a CSP violation shows up here). */
const problems: string[] = [];
const PASSWORD = "correct horse battery";

beforeAll(async () => {
  catcher = await startMailCatcher({ port: 0 });
  [env, { browser, context, page }] = await Promise.all([startE2eStack({ SMTP_URL: catcher.url }), openBrowser()]);
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  page.on("console", (message) => {
    // A signed-out start (401 from get-session) and a browser's favicon request log "Failed to load resource".
    if (message.type() === "error" && !message.text().startsWith("Failed to load resource")) problems.push(message.text());
  });
}, STARTUP_MS);
afterAll(async () => {
  await browser?.close();
  await env?.stop();
  await catcher?.close();
});

/** Signs up as a client without a callbackURL would (curl); returns the mailed verification link. */
async function signUpElsewhere(email: string): Promise<string> {
  const res = await fetch(`${env.baseUrl}/api/auth/sign-up/email`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email, password: PASSWORD, name: "Curl User" }),
  });
  expect(res.status).toBe(200);
  const mail = await catcher.waitFor((m) => m.to.includes(email) && m.links.some((l) => l.includes("/verify-email")), 15_000);
  const link = mail.links.find((l) => l.includes("/verify-email")) ?? "";
  expect(new URL(link).searchParams.get("callbackURL")).toBe(`${env.baseUrl}/`);
  return link;
}

const heading = () => page.locator("h1").textContent();
const continueHref = () => page.locator("#continue").getAttribute("href");

async function signIn(email: string, password: string): Promise<void> {
  await page.locator("#signin-form input[name=email]").fill(email);
  await page.locator("#signin-form input[name=password]").fill(password);
  await page.locator("#signin-form button[type=submit]").click();
  await page.locator("#task-list[data-loaded]").waitFor({ state: "attached" });
}

describe("a verification link without a callback of its own", { timeout: TEST_MS }, () => {
  it("lands on a page saying the address is verified, with Continue to the web app; opened again it says already verified", async () => {
    const email = "lin@example.com";
    const link = await signUpElsewhere(email);

    await page.goto(link);
    await page.locator("h1", { hasText: "Confirm your email address" }).waitFor();
    await page.locator("#password").fill(PASSWORD);
    await page.locator("#confirm button[type=submit]").click();
    await page.locator("h1", { hasText: "Your email address is verified" }).waitFor();
    expect(new URL(page.url()).origin).toBe(env.baseUrl);
    expect(await continueHref()).toBe(`${env.webUrl}/`);
    await checkPage(page, "verification landing");

    await page.goto(link);
    await page.locator("h1", { hasText: "already verified" }).waitFor();
    expect(await heading()).toBe("Your email address is already verified");
    expect(await page.locator("#confirm").count()).toBe(0);
    await checkPage(page, "verification link opened again");
    await page.locator("#continue").click();
    await page.locator("#signin-form").waitFor();
    expect(new URL(page.url()).origin).toBe(env.webUrl);
    await signIn(email, PASSWORD);
    expect(await page.locator("#verify-banner").isHidden()).toBe(true);
    expect(problems).toEqual([]);
  });

  it("the click without the password leads to the web app's reset page; the link then says already verified", async () => {
    await context.clearCookies();
    await page.goto(env.webUrl);
    await page.evaluate(() => localStorage.clear());
    const email = "mo@example.com";
    const link = await signUpElsewhere(email);

    await page.goto(link);
    await page.locator("#confirm button[type=submit]").click();
    await page.locator("#reset-form").waitFor();
    expect(new URL(page.url()).origin).toBe(env.webUrl);
    await page.locator("#reset-form input[name=newPassword]").fill("a password of mine 1");
    await page.locator("#reset-form button[type=submit]").click();
    await page.locator("#notice", { hasText: "Your password is changed." }).waitFor();

    await page.goto(link);
    await page.locator("h1", { hasText: "already verified" }).waitFor();
    expect(await continueHref()).toBe(`${env.webUrl}/`);
    await page.goto(env.webUrl);
    await signIn(email, "a password of mine 1");
    expect(problems).toEqual([]);
  });
});
