import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type E2eStack, openBrowser, pageFetch, STARTUP_MS, startE2eStack, storedToken, TEST_MS, WAIT_MS } from "./harness.js";
import { checkPage } from "./page-checks.js";

/**
 * "Continue with Local IdP" in Chromium against the real stack and a real OpenID Provider (panva's
 * oidc-provider with its development login form, tools/stack/src/local-idp.ts), run in this process
 * as `LOCAL_IDP=true pnpm start` runs it: the button, the provider's login form, identity's
 * callback, back on the web app signed in with a JWT from get-session.
 */
let env: E2eStack;
let browser: Browser;
let page: Page;
const problems: string[] = [];

beforeAll(async () => {
  [env, { browser, page }] = await Promise.all([startE2eStack({}, { localIdp: true }), openBrowser()]);
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() === "error" && !message.text().startsWith("Failed to load resource")) problems.push(message.text());
  });
}, STARTUP_MS);
afterAll(async () => {
  await browser?.close();
  await env?.stop();
});

const button = () => page.getByRole("button", { name: "Continue with Local IdP" });

describe("sign-in with a provider, in Chromium, against the real stack and a real OpenID Provider", { timeout: TEST_MS }, () => {
  it("shows a labelled button per provider on the sign-in page", async () => {
    await page.goto(env.webUrl);
    await page.locator("#signin-form").waitFor();
    await button().waitFor();
    expect(await page.locator("#auth-providers").isHidden()).toBe(false);
    await checkPage(page, "sign-in with providers", "signin-providers");
  });

  it("signs in through the provider's login form and lands back signed in, with a JWT from get-session", async () => {
    await page.goto(env.webUrl);
    await button().click();
    // The provider's own development login form (any of the demo accounts, any password).
    const issuer = env.stack.localIdp?.issuer ?? "";
    await page.waitForURL((url) => url.origin === issuer && url.pathname.startsWith("/interaction/"));
    await page.locator("input[name=login]").fill("ada@example.com");
    await page.locator("input[name=password]").fill("any password");
    await page.locator("button[type=submit]").click();
    // A consent screen, if the provider asks (the local one grants its only client at once).
    await page.waitForURL((url) => url.origin === env.webUrl || url.pathname.startsWith("/interaction/"));
    if (new URL(page.url()).origin === issuer) await page.locator("button[type=submit]").click();

    await page.locator("#task-list[data-loaded]").waitFor({ state: "attached" });
    expect(await page.locator("#whoami").textContent()).toBe("ada@example.com");
    // The landing query left the address bar.
    expect(new URL(page.url()).search).toBe("");
    const token = await storedToken(page);
    expect(token).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    const me = await pageFetch(page, `${env.baseUrl}/api/me`, { headers: { authorization: `Bearer ${token}` }, credentials: "omit" });
    expect(me.status).toBe(200);
    expect(JSON.parse(me.body)).toMatchObject({ data: { email: "ada@example.com" } });
  });

  it("says what went wrong, in a sentence, when the provider sign-in comes back with an error", async () => {
    // A browser with no session, as after a refused sign-in (identity sets no cookie then).
    const context = await browser.newContext();
    context.setDefaultTimeout(WAIT_MS);
    try {
      const fresh = await context.newPage();
      await fresh.goto(`${env.webUrl}/?authError=1&error=account_not_linked`);
      await fresh.locator("#signin-form").waitFor();
      const alert = fresh.getByRole("alert").filter({ hasText: "An account with this email already exists" });
      await alert.waitFor();
      expect(await alert.textContent()).not.toContain("account_not_linked");
      expect(new URL(fresh.url()).search).toBe("");
    } finally {
      await context.close();
    }
    expect(problems).toEqual([]);
  });
});
