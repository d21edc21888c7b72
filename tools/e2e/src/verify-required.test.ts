import { type CaughtMail, type MailCatcher, startMailCatcher } from "@app/mailer/catcher";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type E2eStack, openBrowser, STARTUP_MS, startE2eStack, storedToken, TEST_MS } from "./harness.js";
import { checkPage } from "./page-checks.js";

// Sign-up in Chromium against a stack whose identity requires a verified address
// (REQUIRE_EMAIL_VERIFICATION=true) and mails through real SMTP to a catcher started here:
// sign-up signs nobody in, the page says where the link went, and the link from the caught mail
// (its one-click page, with the password typed) lets the user sign in.
let catcher: MailCatcher;
let env: E2eStack;
let browser: Browser;
let page: Page;
/** Uncaught page errors and console errors (a CSP violation shows up here). */
const problems: string[] = [];
const EMAIL = "grace@example.com";
const PASSWORD = "correct horse battery";

beforeAll(async () => {
  catcher = await startMailCatcher({ port: 0 });
  [env, { browser, page }] = await Promise.all([
    startE2eStack({ SMTP_URL: catcher.url, REQUIRE_EMAIL_VERIFICATION: "true" }),
    openBrowser(),
  ]);
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  page.on("console", (message) => {
    // A refused sign-in (403 email_not_verified) logs "Failed to load resource"; that is expected.
    if (message.type() === "error" && !message.text().startsWith("Failed to load resource")) problems.push(message.text());
  });
}, STARTUP_MS);
afterAll(async () => {
  await browser?.close();
  await env?.stop();
  await catcher?.close();
});

async function signIn(): Promise<void> {
  await page.locator("#signin-form input[name=email]").fill(EMAIL);
  await page.locator("#signin-form input[name=password]").fill(PASSWORD);
  await page.locator("#signin-form button[type=submit]").click();
}

describe("sign-up when the service requires a verified address", { timeout: TEST_MS }, () => {
  it("says where the link went; after the mailed link, signing in works", async () => {
    await page.goto(env.webUrl);
    await page.locator("#signup-form input[name=name]").fill("Grace Hopper");
    await page.locator("#signup-form input[name=email]").fill(EMAIL);
    await page.locator("#signup-form input[name=password]").fill(PASSWORD);
    await page.locator("#signup-form button[type=submit]").click();
    const message = page.locator("#check-inbox");
    await message.waitFor();
    expect(await message.textContent()).toContain(`Check your inbox: we sent a link to ${EMAIL} to confirm your address.`);
    expect(await page.locator("#signup-form").count()).toBe(0);
    expect(await page.locator("#signin-form input[name=email]").inputValue()).toBe(EMAIL);
    expect(await storedToken(page)).toBeNull();
    await checkPage(page, "check your inbox after sign-up");

    // Before the link is followed, signing in is refused with a sentence, never a code.
    await signIn();
    const refusal = page.locator("#signin-form .form-error:not(:empty)");
    await refusal.waitFor();
    expect(await refusal.textContent()).toBe("Confirm your email address first: follow the link in the message we sent you.");
    expect(await storedToken(page)).toBeNull();

    const mail: CaughtMail = await catcher.waitFor((m) => m.to.includes(EMAIL) && m.links.some((l) => l.includes("/verify-email")), 15_000);
    // The link opens identity's one-click page (a GET changes nothing); the account's password
    // typed there keeps it, and the click goes back to the web app.
    await page.goto(mail.links.find((l) => l.includes("/verify-email")) ?? "");
    await page.locator("h1", { hasText: "Confirm your email address" }).waitFor();
    await checkPage(page, "the verification link's one-click page");
    await page.locator("#password").fill(PASSWORD);
    await page.locator("#confirm button[type=submit]").click();
    await page.locator("#notice", { hasText: "Your email address is verified." }).waitFor();
    expect(new URL(page.url()).origin).toBe(env.webUrl);
    await page.locator("#signin-form").waitFor();

    await signIn();
    await page.locator("#task-list[data-loaded]").waitFor({ state: "attached" });
    expect((await storedToken(page))?.split(".")).toHaveLength(3);
    expect(await page.locator("#verify-banner").isHidden()).toBe(true);
    expect(problems).toEqual([]);
  });
});
