import { readFile } from "node:fs/promises";
import { type CaughtMail, type MailCatcher, startMailCatcher } from "@app/mailer/catcher";
import { generate } from "otplib";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type E2eStack, openBrowser, pageFetch, STARTUP_MS, startE2eStack, storedToken, TEST_MS, WAIT_MS } from "./harness.js";
import { checkPage } from "./page-checks.js";

// Two-factor authentication in Chromium against the real stack: the web app's security page sets
// up an authenticator app (the secret read from the page, codes computed here with otplib as an
// app would), and every way a pending sign-in finishes on the second-factor page: a TOTP code,
// an emailed code and a backup code (mails from a real SMTP catcher), a trusted device, and a
// magic link that lands on the page.
let catcher: MailCatcher;
let env: E2eStack;
let browser: Browser;
let page: Page;
/** Uncaught page errors and console errors (a CSP violation shows up here). */
const problems: string[] = [];
// A fixed address (each test file has its own database), so the screenshots do not change between runs.
const EMAIL = "alan@example.com";
const PASSWORD = "correct horse battery";
/** The authenticator app's secret, read from the setup page. */
let secret = "";
/** The backup codes, read from the downloaded file. */
let backupCodes: string[] = [];

beforeAll(async () => {
  catcher = await startMailCatcher({ port: 0 });
  [env, { browser, page }] = await Promise.all([startE2eStack({ SMTP_URL: catcher.url }), openBrowser()]);
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() === "error" && !message.text().startsWith("Failed to load resource")) problems.push(message.text());
  });
}, STARTUP_MS);
afterAll(async () => {
  await browser?.close();
  await env?.stop();
  await catcher?.close();
});

const PERIOD = 30;
const stepNow = () => Math.floor(Date.now() / 1000 / PERIOD);
/** The last time step a code was sent for: identity takes each step once, and one step either side of its clock. */
let lastStep = -1;
/** A code of the app for a step identity has not seen yet, waiting (by the clock) while that step is too far ahead. */
async function appCode(): Promise<string> {
  const step = Math.max(stepNow(), lastStep + 1);
  while (step > stepNow() + 1) await new Promise((resolve) => setTimeout(resolve, 250));
  lastStep = step;
  return generate({ secret, epoch: step * PERIOD });
}

const used = new Set<number>();
/** A 6-digit code that is not the app's for any step identity accepts now. */
async function wrongCode(): Promise<string> {
  const now = stepNow();
  const valid = new Set(await Promise.all([now - 1, now, now + 1, now + 2].map((step) => generate({ secret, epoch: step * PERIOD }))));
  let code = 0;
  while (valid.has(String(code).padStart(6, "0"))) code += 1;
  return String(code).padStart(6, "0");
}

/** The first mail to `to` with `subject` in its subject that this file has not read yet. */
async function mailTo(to: string, subject: string): Promise<CaughtMail> {
  const mail = await catcher.waitFor((m) => !used.has(m.id) && m.to.includes(to) && m.subject.includes(subject), 15_000);
  used.add(mail.id);
  return mail;
}

async function signedInWithJwt(on: Page = page): Promise<void> {
  await on.locator("#task-list[data-loaded]").waitFor({ state: "attached" });
  expect(await on.locator("#whoami").textContent()).toBe(EMAIL);
  const token = await storedToken(on);
  expect(token).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
  const me = await pageFetch(on, `${env.baseUrl}/api/me`, { headers: { authorization: `Bearer ${token}` }, credentials: "omit" });
  expect(me.status).toBe(200);
}

/** Signs out and in with the password; answers once the page after the password shows. */
async function signInAgain(): Promise<void> {
  await page.locator("#sign-out").click();
  await page.locator("#signin-form input[name=email]").fill(EMAIL);
  await page.locator("#signin-form input[name=password]").fill(PASSWORD);
  await page.locator("#signin-form button[type=submit]").click();
}

const stepForm = () => page.locator("#two-factor-form");

describe("two-factor authentication in Chromium, against the real stack", { timeout: TEST_MS }, () => {
  it("sets up an authenticator app: a QR code drawn in the page, the secret as text, a first code turns it on", async () => {
    await page.goto(env.webUrl);
    await page.locator("#signup-form input[name=name]").fill("Alan Turing");
    await page.locator("#signup-form input[name=email]").fill(EMAIL);
    await page.locator("#signup-form input[name=password]").fill(PASSWORD);
    await page.locator("#signup-form button[type=submit]").click();
    await page.locator("#task-list[data-loaded]").waitFor({ state: "attached" });
    // The address is confirmed first: a mailed link or code to an unconfirmed account proves the
    // mailbox, which ends the sessions, password and factors someone else may have set up there.
    await page.goto((await mailTo(EMAIL, "Verify")).links.find((l) => l.includes("/verify-email")) ?? "");
    await page.locator("#notice", { hasText: "Your email address is verified." }).waitFor();
    await page.goto(`${env.webUrl}/#/security`);
    await page.locator("#two-factor-section[data-enabled=false]").waitFor();
    await page.locator("#totp-enable-form input[name=password]").fill(PASSWORD);
    await page.locator("#totp-enable-form button[type=submit]").click();
    await page.locator("#totp-confirm-form").waitFor();
    // The QR code is a PNG made in the page from the otpauth URI: no request leaves for it.
    const qr = await page
      .locator("#totp-qr")
      .evaluate((img: HTMLImageElement) => ({ src: img.src.slice(0, 22), ok: img.naturalWidth > 0 }));
    expect(qr).toEqual({ src: "data:image/png;base64,", ok: true });
    secret = (await page.locator("#totp-secret").textContent()) ?? "";
    expect(secret).toMatch(/^[A-Z2-7]{16,}$/);
    await checkPage(page, "two-factor setup", "two-factor-setup");

    // A wrong code: a sentence on the form, and the page stays signed in.
    await page.locator("#totp-confirm-form input[name=code]").fill(await wrongCode());
    await page.locator("#totp-confirm-form button[type=submit]").click();
    await page.locator("#totp-confirm-form .form-error", { hasText: "That code is not right" }).waitFor();
    expect(await page.locator("#whoami").textContent()).toBe(EMAIL);

    await page.locator("#totp-confirm-form input[name=code]").fill(await appCode());
    await page.locator("#totp-confirm-form button[type=submit]").click();
    await page.locator("#backup-codes").waitFor();
    expect(await page.locator("#two-factor-status").textContent()).toBe("Two-factor authentication is on.");
    const shown = (await page.locator("#backup-code-list code").allTextContents()).map((c) => c.trim());
    expect(shown.length).toBeGreaterThan(5);
    const [download] = await Promise.all([page.waitForEvent("download"), page.locator("#backup-codes-download").click()]);
    expect(download.suggestedFilename()).toBe("backup-codes.txt");
    const file = await readFile((await download.path()) ?? "", "utf8");
    backupCodes = shown.filter((code) => file.split("\n").includes(code));
    expect(backupCodes).toEqual(shown);
    await checkPage(page, "backup codes", "two-factor-backup-codes");
    await page.locator("#backup-codes-done").click();
    await page.locator("#two-factor-section[data-enabled=true]").waitFor();
    expect(await page.locator("#backup-codes").count()).toBe(0); // shown once
  });

  it("signs out; the password then opens the second-factor page, and the app's code signs in with a JWT", async () => {
    await signInAgain();
    await stepForm().waitFor();
    expect(await storedToken(page)).toBeNull();
    await checkPage(page, "two-factor step", "two-factor-step");
    await stepForm()
      .locator("input[name=code]")
      .fill(await appCode());
    await stepForm().locator("button[type=submit]").click();
    await signedInWithJwt();
  });

  it("'Email me a code instead' finishes the step with a mailed code", async () => {
    await signInAgain();
    await page.locator("#email-code-instead").click();
    await page.locator("#notice", { hasText: "We mailed you a code." }).waitFor();
    const code = /^\s*(\d{6})\s*$/m.exec((await mailTo(EMAIL, "verification code")).text)?.[1] ?? "";
    await stepForm().locator("input[name=code]").fill(code);
    await stepForm().locator("button[type=submit]").click();
    await signedInWithJwt();
  });

  it("a backup code finishes the step once; 'trust this device' then skips it here", async () => {
    await signInAgain();
    await page.locator("#use-backup-code").click();
    await stepForm().locator("label", { hasText: "Backup code" }).waitFor();
    await stepForm()
      .locator("input[name=code]")
      .fill(backupCodes[0] ?? "");
    await page.locator("#trust-device").check();
    await stepForm().locator("button[type=submit]").click();
    await signedInWithJwt();
    await signInAgain();
    await signedInWithJwt();
  });

  it("a magic link to the account lands on the second-factor page in a browser without the trusted device", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    context.setDefaultTimeout(WAIT_MS);
    try {
      const other = await context.newPage();
      await other.goto(env.webUrl);
      await other.locator("#signin-form input[name=email]").fill(EMAIL);
      await other.locator("#magic-link").click();
      await other.locator("#notice", { hasText: "we sent a sign-in link" }).waitFor();
      await other.goto((await mailTo(EMAIL, "sign-in link")).links.find((l) => l.includes("/magic-link/verify")) ?? "");
      await other.getByRole("button", { name: "Sign in" }).click();
      await other.locator("#two-factor-form").waitFor();
      expect(new URL(other.url()).pathname).toBe("/"); // the landing path left the address bar
      await other.locator("#use-backup-code").click();
      await other.locator("#two-factor-form input[name=code]").fill(backupCodes[0] ?? "");
      await other.locator("#two-factor-form button[type=submit]").click();
      await other.locator("#two-factor-form .form-error", { hasText: "already used" }).waitFor();
      await other.locator("#use-backup-code").click(); // back to the app's code
      await other.locator("#two-factor-form input[name=code]").fill(await appCode());
      await other.locator("#two-factor-form button[type=submit]").click();
      await signedInWithJwt(other);
    } finally {
      await context.close();
    }
  });

  it("new backup codes replace the old ones; turning it off signs in with the password alone", async () => {
    await page.goto(`${env.webUrl}/#/security`);
    await page.locator("#two-factor-section[data-enabled=true]").waitFor();
    await checkPage(page, "security with two-factor on", "security-two-factor-on");
    await page.locator("#backup-codes-form input[name=password]").fill(PASSWORD);
    await page.locator("#backup-codes-form button[type=submit]").click();
    await page.locator("#backup-codes").waitFor();
    const fresh = await page.locator("#backup-code-list code").allTextContents();
    expect(fresh.some((code) => backupCodes.includes(code.trim()))).toBe(false);
    await page.locator("#backup-codes-done").click();

    await page.locator("#two-factor-disable-form input[name=password]").fill(PASSWORD);
    await page.locator("#two-factor-disable-form button[type=submit]").click();
    await page.locator("#confirm-ok").click();
    await page.locator("#two-factor-section[data-enabled=false]").waitFor();
    await page.locator("#notice", { hasText: "Two-factor authentication is off." }).waitFor();
    await signInAgain();
    await signedInWithJwt();
    expect(problems).toEqual([]);
  });
});
