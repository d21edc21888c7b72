import { type CaughtMail, type MailCatcher, startMailCatcher } from "@app/mailer/catcher";
import type { Browser, CDPSession, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type E2eStack, openBrowser, pageFetch, STARTUP_MS, startE2eStack, storedToken, TEST_MS } from "./harness.js";
import { checkPage } from "./page-checks.js";

// Passkeys and sign-in by mail in Chromium against the real stack: a passkey made and used by
// Chromium's virtual authenticator (the DevTools protocol's WebAuthn domain, a real CTAP2
// authenticator in the browser, with user verification), and mailed links and codes taken from a
// real SMTP catcher. The web app is on http://localhost (a secure context), and identity's
// relying party id is BASE_URL's host, localhost too (apps/identity/src/config-factors.ts).
let catcher: MailCatcher;
let env: E2eStack;
let browser: Browser;
let page: Page;
let cdp: CDPSession;
/** The virtual authenticator's id. */
let authenticatorId = "";
/** Uncaught page errors and console errors (a CSP violation shows up here). */
const problems: string[] = [];
// A fixed address (each test file has its own database), so the screenshots do not change between runs.
const EMAIL = "grace@example.com";
const PASSWORD = "correct horse battery";

beforeAll(async () => {
  catcher = await startMailCatcher({ port: 0 });
  [env, { browser, page }] = await Promise.all([startE2eStack({ SMTP_URL: catcher.url }), openBrowser()]);
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() === "error" && !message.text().startsWith("Failed to load resource")) problems.push(message.text());
  });
  // The authenticator lives as long as this session stays attached to the page.
  cdp = await page.context().newCDPSession(page);
  await cdp.send("WebAuthn.enable", { enableUI: false });
  ({ authenticatorId } = await cdp.send("WebAuthn.addVirtualAuthenticator", {
    options: { protocol: "ctap2", transport: "internal", hasResidentKey: true, hasUserVerification: true, isUserVerified: true },
  }));
}, STARTUP_MS);
afterAll(async () => {
  await browser?.close();
  await env?.stop();
  await catcher?.close();
});

const used = new Set<number>();
/** The first mail to `to` with `subject` in its subject that this file has not read yet. */
async function mailTo(to: string, subject: string): Promise<CaughtMail> {
  const mail = await catcher.waitFor((m) => !used.has(m.id) && m.to.includes(to) && m.subject.includes(subject), 15_000);
  used.add(mail.id);
  return mail;
}

/** Waits for the signed-in task list and checks the stored JWT is one the API takes. */
async function signedInWithJwt(): Promise<void> {
  await page.locator("#task-list[data-loaded]").waitFor({ state: "attached" });
  expect(await page.locator("#whoami").textContent()).toBe(EMAIL);
  const token = await storedToken(page);
  expect(token).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
  const me = await pageFetch(page, `${env.baseUrl}/api/me`, { headers: { authorization: `Bearer ${token}` }, credentials: "omit" });
  expect(me.status).toBe(200);
}

async function signOut(): Promise<void> {
  await page.locator("#sign-out").click();
  await page.locator("#signin-form").waitFor();
  expect(await storedToken(page)).toBeNull();
}

const passkeyRows = () => page.locator("#passkeys li");

describe("passkeys and sign-in by mail, in Chromium, against the real stack", { timeout: TEST_MS }, () => {
  it("the sign-in page offers a passkey, a mailed link and a mailed code", async () => {
    await page.goto(env.webUrl);
    await page.locator("#signin-form").waitFor();
    for (const id of ["#passkey-sign-in", "#magic-link", "#email-code"]) expect(await page.locator(id).isVisible(), id).toBe(true);
    // The email field lets the browser offer passkeys among its suggestions.
    expect(await page.locator("#signin-form input[name=email]").getAttribute("autocomplete")).toBe("username webauthn");
    await page.locator("#magic-link").click();
    await page.locator('#signin-form [data-issue-for="email"]', { hasText: "Enter your email address first." }).waitFor();
    await checkPage(page, "sign-in with passkey and mail", "signin-options");
  });

  it("adds a passkey from the security page with the virtual authenticator, then renames it", async () => {
    await page.locator("#signup-form input[name=name]").fill("Grace Hopper");
    await page.locator("#signup-form input[name=email]").fill(EMAIL);
    await page.locator("#signup-form input[name=password]").fill(PASSWORD);
    await page.locator("#signup-form button[type=submit]").click();
    await page.locator("#task-list[data-loaded]").waitFor({ state: "attached" });
    await page.locator("#nav-account").click();
    await page.locator("#account-security-link").click();
    await page.locator("#passkeys-empty").waitFor();
    await page.locator("#two-factor-section[data-enabled=false]").waitFor();
    await checkPage(page, "security", "security");

    await page.locator("#passkey-add-form input[name=name]").fill("Chromium virtual key");
    await page.locator("#passkey-add-form button[type=submit]").click();
    await page.locator("#notice", { hasText: "The passkey is added: you can sign in with it." }).waitFor();
    await passkeyRows().first().waitFor();
    expect(await passkeyRows().count()).toBe(1);
    expect(await passkeyRows().first().textContent()).toContain("Chromium virtual key");
    const { credentials } = await cdp.send("WebAuthn.getCredentials", { authenticatorId });
    expect(credentials).toHaveLength(1);
    expect(credentials[0]?.isResidentCredential).toBe(true);

    // The same authenticator again: identity lists its passkey as excluded, and the browser refuses.
    await page.locator("#passkey-add-form button[type=submit]").click();
    await page.locator("#passkey-add-form .form-error", { hasText: "This device already holds a passkey for your account." }).waitFor();
    expect(await passkeyRows().count()).toBe(1);

    await passkeyRows().first().getByRole("button", { name: "Rename Chromium virtual key" }).click();
    await passkeyRows().first().locator("form.edit input[name=name]").fill("Test laptop");
    await passkeyRows().first().locator("form.edit button[type=submit]").click();
    await page.locator("#notice", { hasText: "The passkey is renamed Test laptop." }).waitFor();
    await checkPage(page, "security with a passkey", "security-passkey");
  });

  it("signs out, then signs in with the passkey and reaches the app with a JWT", async () => {
    await signOut();
    await page.locator("#passkey-sign-in").click();
    await signedInWithJwt();
    const { credentials } = await cdp.send("WebAuthn.getCredentials", { authenticatorId });
    expect(credentials[0]?.signCount).toBeGreaterThan(0);
  });

  it("deletes the passkey: it no longer signs in", async () => {
    await page.goto(`${env.webUrl}/#/security`);
    await passkeyRows().first().waitFor();
    await passkeyRows().first().getByRole("button", { name: "Delete Test laptop" }).click();
    await page.locator("#confirm-ok").click();
    await page.locator("#passkeys-empty").waitFor();
    await signOut();
    // The authenticator still holds it; identity no longer knows it.
    await page.locator("#passkey-sign-in").click();
    await page.locator("#signin-form .form-error", { hasText: "The passkey could not be verified." }).waitFor();
    expect(await storedToken(page)).toBeNull();
  });

  it("'Email me a link' mails a link whose one click signs in", async () => {
    await page.goto(env.webUrl);
    await page.locator("#signin-form input[name=email]").fill(EMAIL);
    await page.locator("#magic-link").click();
    await page.locator("#notice", { hasText: `Check your inbox: we sent a sign-in link to ${EMAIL}.` }).waitFor();
    const link = (await mailTo(EMAIL, "sign-in link")).links.find((l) => l.includes("/magic-link/verify")) ?? "";
    await page.goto(link);
    // Identity's one-click page: a mail scanner's GET spends nothing; the button signs in.
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL((url) => url.origin === env.webUrl);
    await signedInWithJwt();
  });

  it("'Email me a code' opens a code field; the mailed code signs in", async () => {
    await signOut();
    await page.locator("#signin-form input[name=email]").fill(EMAIL);
    await page.locator("#email-code").click();
    await page.locator("#email-code-form").waitFor();
    expect(await page.locator("#email-code-sent").textContent()).toBe(`We sent a sign-in code to ${EMAIL}. Enter it here.`);
    await checkPage(page, "sign-in code", "signin-email-code");
    const code = /^\s*(\d{6})\s*$/m.exec((await mailTo(EMAIL, "sign-in code")).text)?.[1] ?? "";
    await page.locator("#email-code-form input[name=otp]").fill(code === "000000" ? "111111" : "000000");
    await page.locator("#email-code-form button[type=submit]").click();
    await page.locator("#email-code-form .form-error:not(:empty)").waitFor();
    await page.locator("#email-code-form input[name=otp]").fill(code);
    await page.locator("#email-code-form button[type=submit]").click();
    await signedInWithJwt();
    expect(problems).toEqual([]);
  });
});
