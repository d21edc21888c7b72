import { type MailCatcher, startMailCatcher } from "@app/mailer/catcher";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type E2eStack, openBrowser, pageFetch, STARTUP_MS, startE2eStack, storedToken, TEST_MS, WAIT_MS } from "./harness.js";
import { checkPage } from "./page-checks.js";

/**
 * "Linked sign-in methods" on the account page in Chromium, against the real stack with the local
 * OpenID Provider (tools/stack/src/local-idp.ts, as `LOCAL_IDP=true pnpm start` runs it) and real
 * SMTP to a catcher started here: a password user verifies the address with the mailed link,
 * links "Local IdP" through the provider's own login form, signs in with it, and unlinks it; a
 * provider account of another address comes back with its sentence and links nothing.
 */
let catcher: MailCatcher;
let env: E2eStack;
let browser: Browser;
let page: Page;
const problems: string[] = [];
const PASSWORD = "correct horse battery";
/** A demo account of the local provider, which vouches for its address. */
const ADA = "ada@example.com";

beforeAll(async () => {
  catcher = await startMailCatcher({ port: 0 });
  [env, { browser, page }] = await Promise.all([startE2eStack({ SMTP_URL: catcher.url }, { localIdp: true }), openBrowser()]);
  watch(page);
}, STARTUP_MS);
afterAll(async () => {
  await browser?.close();
  await env?.stop();
  await catcher?.close();
});

/** Uncaught page errors and console errors (a CSP violation shows up here). */
function watch(target: Page): void {
  target.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  target.on("console", (message) => {
    if (message.type() === "error" && !message.text().startsWith("Failed to load resource")) problems.push(message.text());
  });
}

/** Signs up on the web app, then opens the mailed verification link in the same, signed-in browser. */
async function signUpVerified(target: Page, email: string): Promise<void> {
  await target.goto(env.webUrl);
  await target.locator("#signup-form input[name=name]").fill("Link Tester");
  await target.locator("#signup-form input[name=email]").fill(email);
  await target.locator("#signup-form input[name=password]").fill(PASSWORD);
  await target.locator("#signup-form button[type=submit]").click();
  await target.locator("#task-list[data-loaded]").waitFor({ state: "attached" });
  const mail = await catcher.waitFor((m) => m.to.includes(email) && m.links.some((l) => l.includes("/verify-email")), 15_000);
  await target.goto(mail.links.find((l) => l.includes("/verify-email")) ?? "");
  await target.locator("#notice", { hasText: "Your email address is verified." }).waitFor();
}

/** Signs in at the provider's development login form as `login` (any password), once the browser is there. */
async function atProvider(target: Page, login: string): Promise<void> {
  const issuer = env.stack.localIdp?.issuer ?? "";
  await target.waitForURL((url) => url.origin === issuer && url.pathname.startsWith("/interaction/"));
  await target.locator("input[name=login]").fill(login);
  await target.locator("input[name=password]").fill("any password");
  await target.locator("button[type=submit]").click();
  // A consent screen, if the provider asks (the local one grants its only client at once).
  await target.waitForURL((url) => url.origin === env.webUrl || url.pathname.startsWith("/interaction/"));
  if (new URL(target.url()).origin === issuer) await target.locator("button[type=submit]").click();
}

async function openAccount(target: Page): Promise<void> {
  await target.locator("#nav-account").click();
  await target.locator("#linked-accounts[data-loaded]").waitFor({ state: "attached" });
}

const linkButton = (target: Page) => target.getByRole("button", { name: "Link Local IdP", exact: true });
const localRow = (target: Page) => target.locator('#linked-accounts li[data-provider="local"]');

/** The signed-in user's id, from GET /api/me with the stored JWT. */
async function userId(target: Page): Promise<string> {
  const me = await pageFetch(target, `${env.baseUrl}/api/me`, {
    headers: { authorization: `Bearer ${await storedToken(target)}` },
    credentials: "omit",
  });
  expect(me.status).toBe(200);
  return (JSON.parse(me.body) as { data: { id: string } }).data.id;
}

describe("linking a sign-in provider from Account settings, in Chromium, with a real OpenID Provider", { timeout: TEST_MS }, () => {
  it("a password user with a verified address links Local IdP, then signs in with it alone", async () => {
    await signUpVerified(page, ADA);
    const id = await userId(page);
    await openAccount(page);
    expect(await page.locator("#linked-accounts li").count()).toBe(1);
    expect(await page.locator('#linked-accounts li[data-provider="credential"]').textContent()).toContain("Password");
    expect(await page.locator("#link-verify-first").isHidden()).toBe(true);
    await checkPage(page, "linked sign-in methods", "account-linked");

    await linkButton(page).click();
    await atProvider(page, ADA);
    // Back on the account page, the same session, with the provider listed and the landing gone.
    await page.locator("#notice", { hasText: "Local IdP is linked: you can sign in with it." }).waitFor();
    await localRow(page).waitFor();
    expect(new URL(page.url()).hash).toBe("#/account");
    expect(await linkButton(page).count()).toBe(0);
    expect(await page.locator("#alert").isHidden()).toBe(true);

    await page.locator("#sign-out").click();
    await page.locator("#signin-form").waitFor();
    await page.getByRole("button", { name: "Continue with Local IdP" }).click();
    // The provider may still hold this browser's sign-in from the link, and then asks nothing.
    const issuer = env.stack.localIdp?.issuer ?? "";
    const tasks = page.locator("#task-list[data-loaded]");
    const asked = await Promise.race([
      page.waitForURL((url) => url.origin === issuer && url.pathname.startsWith("/interaction/")).then(() => true),
      tasks.waitFor({ state: "attached" }).then(() => false),
    ]);
    if (asked) await atProvider(page, ADA);
    await tasks.waitFor({ state: "attached" });
    expect(await page.locator("#whoami").textContent()).toBe(ADA);
    expect(await userId(page)).toBe(id);
  });

  it("unlinks the provider while the password remains, and offers it again", async () => {
    await openAccount(page);
    await localRow(page).getByRole("button", { name: "Unlink Local IdP" }).click();
    await page.locator("#notice", { hasText: "Local IdP is unlinked: it no longer signs you in." }).waitFor();
    await linkButton(page).waitFor();
    expect(await localRow(page).count()).toBe(0);
    expect(await page.locator("#linked-accounts li").count()).toBe(1);
    expect(problems).toEqual([]);
  });

  it("an unverified address is told to confirm first; a provider account of another address is refused with a sentence", async () => {
    let context: BrowserContext | undefined;
    try {
      context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      context.setDefaultTimeout(WAIT_MS);
      const other = await context.newPage();
      watch(other);
      const carol = "carol@example.com";
      await other.goto(env.webUrl);
      await other.locator("#signup-form input[name=name]").fill("Carol");
      await other.locator("#signup-form input[name=email]").fill(carol);
      await other.locator("#signup-form input[name=password]").fill(PASSWORD);
      await other.locator("#signup-form button[type=submit]").click();
      await other.locator("#task-list[data-loaded]").waitFor({ state: "attached" });
      await openAccount(other);
      await other.locator("#link-verify-first").waitFor();
      await linkButton(other).click();
      await other.locator("#alert", { hasText: "Confirm your email address first" }).waitFor();
      expect(new URL(other.url()).origin).toBe(env.webUrl);

      const mail = await catcher.waitFor((m) => m.to.includes(carol) && m.links.some((l) => l.includes("/verify-email")), 15_000);
      await other.goto(mail.links.find((l) => l.includes("/verify-email")) ?? "");
      await other.locator("#notice", { hasText: "Your email address is verified." }).waitFor();
      await openAccount(other);
      await linkButton(other).click();
      await atProvider(other, ADA); // the provider's account is Ada's, not Carol's
      const alert = other.locator("#alert", { hasText: "different email address from yours" });
      await alert.waitFor();
      expect(await alert.textContent()).not.toContain("email_mismatch");
      await other.locator("#linked-accounts[data-loaded]").waitFor({ state: "attached" });
      expect(await localRow(other).count()).toBe(0);
      expect(new URL(other.url()).search).toBe("");
    } finally {
      await context?.close();
    }
    expect(problems).toEqual([]);
  });
});
