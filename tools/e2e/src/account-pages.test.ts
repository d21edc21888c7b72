import { type CaughtMail, type MailCatcher, startMailCatcher } from "@app/mailer/catcher";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type E2eStack, freshEmail, openBrowser, pageFetch, STARTUP_MS, startE2eStack, storedToken, TEST_MS, WAIT_MS } from "./harness.js";
import { checkPage } from "./page-checks.js";

// The account pages in Chromium against a real stack whose identity mails through real SMTP to a
// catcher started here: every reset and verification link is taken from a caught mail.
let catcher: MailCatcher;
let env: E2eStack;
let browser: Browser;
let page: Page;
/** A browser where the account is not signed in: a mail client's, where mailed links are opened. */
let mailbox: Page;
/** Uncaught page errors and console errors (a CSP violation shows up here). */
const problems: string[] = [];
// Fixed addresses (each test file has its own database), so the screenshots do not change between runs.
let email = "ada@example.com";
const FIRST_PASSWORD = "correct horse battery";
const RESET_PASSWORD = "a brand new password";
const CHANGED_PASSWORD = "changed once more 1";
const TAKEN_BACK_PASSWORD = "taken back at last 2";
/** The link the old address got once its email changed, kept for the test that takes the account back. */
let revertLink = "";

beforeAll(async () => {
  catcher = await startMailCatcher({ port: 0 });
  [env, { browser, page }] = await Promise.all([startE2eStack({ SMTP_URL: catcher.url }), openBrowser()]);
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  context.setDefaultTimeout(WAIT_MS);
  mailbox = await context.newPage();
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

/** The link (containing `part`) of the first mail to `to` that has one, was not used yet, and has `subject` in its subject. */
const used = new Set<number>();
async function mailedLink(to: string, part: string, subject = ""): Promise<string> {
  const mail: CaughtMail = await catcher.waitFor(
    (m) => !used.has(m.id) && m.to.includes(to) && m.subject.includes(subject) && m.links.some((l) => l.includes(part)),
    15_000,
  );
  used.add(mail.id);
  return mail.links.find((l) => l.includes(part)) ?? "";
}

const notice = () => page.locator("#notice").textContent();

/** The address identity has for the main page's session now (GET get-session with its cookie). */
async function sessionEmail(): Promise<string | undefined> {
  const answer = await pageFetch(page, `${env.baseUrl}/api/auth/get-session`, { credentials: "include" });
  expect(answer.status).toBe(200);
  return (JSON.parse(answer.body) as { user?: { email: string } } | null)?.user?.email;
}

async function signIn(address: string, password: string): Promise<void> {
  await page.locator("#signin-form input[name=email]").fill(address);
  await page.locator("#signin-form input[name=password]").fill(password);
  await page.locator("#signin-form button[type=submit]").click();
}

/** Signs in from outside the browser: one more session of the user (another device). */
async function otherDevice(password: string): Promise<void> {
  const res = await fetch(`${env.baseUrl}/api/auth/sign-in/email`, {
    method: "POST",
    headers: { "content-type": "application/json", "user-agent": "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) Safari/604.1" },
    body: JSON.stringify({ email, password }),
  });
  expect(res.status).toBe(200);
}

describe("account pages against the real services and a real SMTP catcher", { timeout: TEST_MS }, () => {
  it("sign-up shows the check-your-inbox banner; the mailed link verifies the address and says so", async () => {
    await page.goto(env.webUrl);
    await page.locator("#signup-form input[name=name]").fill("Ada Lovelace");
    await page.locator("#signup-form input[name=email]").fill(email);
    await page.locator("#signup-form input[name=password]").fill(FIRST_PASSWORD);
    await page.locator("#signup-form button[type=submit]").click();
    await page.locator("#task-list[data-loaded]").waitFor({ state: "attached" });
    const banner = page.locator("#verify-banner");
    await banner.waitFor();
    expect(await banner.textContent()).toContain(`Check your inbox to verify your email address: we sent a link to ${email}.`);
    await page.locator("#resend-verification").click();
    await page.locator("#notice", { hasText: `A new link is on its way to ${email}.` }).waitFor();
    await checkPage(page, "verify banner", "verify-banner");

    await page.goto(await mailedLink(email, "/verify-email"));
    await page.locator("#notice", { hasText: "Your email address is verified." }).waitFor();
    expect(await banner.isHidden()).toBe(true);
    expect(new URL(page.url()).search).toBe(""); // the landing query left the address bar
  });

  it("forgot password: the same answer for unknown addresses; the mailed link sets a new password", async () => {
    await page.locator("#sign-out").click();
    await page.locator("#forgot-password-link").click();
    await page.locator("#forgot-form").waitFor();
    await checkPage(page, "forgot password", "forgot-password");
    const nobody = freshEmail("nobody");
    await page.locator("#forgot-form input[name=email]").fill(nobody);
    await page.locator("#forgot-form button[type=submit]").click();
    const unknown = (await page.locator("#forgot-sent").textContent()) ?? "";
    expect(unknown).toContain("a link to choose a new password is on its way");

    await page.locator("#back-to-signin").click();
    await page.locator("#forgot-password-link").click();
    await page.locator("#forgot-form input[name=email]").fill(email);
    await page.locator("#forgot-form button[type=submit]").click();
    const known = (await page.locator("#forgot-sent").textContent()) ?? "";
    expect(known.replace(email, "X")).toBe(unknown.replace(nobody, "X")); // nothing tells the two apart
    await checkPage(page, "forgot password sent", "forgot-password-sent");

    // The link is opened in a browser that is signed in again: the reset signs it out too.
    await page.locator("#back-to-signin").click();
    await signIn(email, FIRST_PASSWORD);
    await page.locator("#task-list[data-loaded]").waitFor({ state: "attached" });
    const link = await mailedLink(email, "/reset-password/");
    await page.goto(link);
    await page.locator("#reset-form").waitFor();
    expect(new URL(page.url()).pathname).toBe("/");
    await checkPage(page, "reset password", "reset-password");
    await page.locator("#reset-form input[name=newPassword]").fill("short");
    await page.locator("#reset-form button[type=submit]").click();
    await page.locator('#reset-form [data-issue-for="newPassword"]:not(:empty)').waitFor();
    await page.locator("#reset-form input[name=newPassword]").fill(RESET_PASSWORD);
    await page.locator("#reset-form button[type=submit]").click();
    await page.locator("#signin-form").waitFor();
    expect(await notice()).toBe("Your password is changed. Sign in with the new one.");
    expect(await storedToken(page)).toBeNull();
    expect(await page.locator("#alert").isHidden()).toBe(true);

    await page.goto(link); // spent: identity redirects with ?error=INVALID_TOKEN
    await page.locator("#reset-invalid").waitFor();
    await checkPage(page, "reset link spent");

    await page.goto(env.webUrl);
    await signIn(email, FIRST_PASSWORD);
    await page.locator("#signin-form .form-error:not(:empty)").waitFor();
    await signIn(email, RESET_PASSWORD);
    await page.locator("#task-list[data-loaded]").waitFor({ state: "attached" });
  });

  it("account settings: name, email change confirmed from both inboxes, password with other sessions signed out", async () => {
    await otherDevice(RESET_PASSWORD);
    await page.locator("#nav-account").click();
    await page.locator("#profile-form").waitFor();
    await checkPage(page, "account", "account");

    await page.locator("#profile-form input[name=name]").fill("Ada King");
    await page.locator("#profile-form button[type=submit]").click();
    await page.locator("#notice", { hasText: "Your name is saved." }).waitFor();

    const newEmail = "ada.king@example.com";
    await page.locator("#email-form input[name=newEmail]").fill(newEmail);
    await page.locator("#email-form button[type=submit]").click();
    await page.locator("#notice", { hasText: `Check the inbox of ${email} to confirm the change; then we mail ${newEmail}.` }).waitFor();

    // The current inbox's link, opened in the mail client's browser: a page naming the new
    // address, which changes nothing until its one click; the click sends the new address its link.
    await mailbox.goto(await mailedLink(email, "/verify-email", "Confirm the change"));
    await mailbox.getByText(`about to change to ${newEmail}`).waitFor();
    expect(await sessionEmail()).toBe(email);
    await mailbox.getByRole("button", { name: "Confirm the change" }).click();
    await mailbox.getByText(`A link is on its way to ${newEmail}`).waitFor();
    expect(await sessionEmail()).toBe(email);

    // The new inbox's link: its GET elsewhere changes nothing; opened where Ada is signed in, it moves the account.
    const moveLink = await mailedLink(newEmail, "/verify-email", "Confirm your new email");
    await mailbox.goto(moveLink);
    await mailbox.getByRole("button", { name: "Confirm the new address" }).waitFor();
    expect(await sessionEmail()).toBe(email);
    await page.goto(moveLink);
    await page.locator("#notice", { hasText: "Your email address is changed." }).waitFor();
    expect(await page.locator("#whoami").textContent()).toBe(newEmail);

    // The old inbox is told, with a link that takes the account back: its GET changes nothing
    // (the last test clicks it).
    revertLink = await mailedLink(email, "/verify-email", "was changed");
    await mailbox.goto(revertLink);
    await mailbox.getByRole("button", { name: "Take my account back" }).waitFor();
    expect(await sessionEmail()).toBe(newEmail);
    email = newEmail;

    await page.locator("#nav-account").click();
    await page.locator("#password-form input[name=currentPassword]").fill("not my password");
    await page.locator("#password-form input[name=newPassword]").fill(CHANGED_PASSWORD);
    await page.locator("#password-form button[type=submit]").click();
    await page.locator("#password-form .form-error", { hasText: "That password is not correct." }).waitFor();
    await page.locator("#password-form input[name=currentPassword]").fill(RESET_PASSWORD);
    await page.locator("#password-form button[type=submit]").click();
    await page.locator("#notice", { hasText: "Your password is changed, and your other sessions are signed out." }).waitFor();
    await page.locator("#account-sessions-link").click();
    await page.locator("#sessions[data-loaded]").waitFor();
    expect(await page.locator("#sessions li").count()).toBe(1);
  });

  it("sessions: the current one marked, one signed out, then everywhere else", async () => {
    await otherDevice(CHANGED_PASSWORD);
    await otherDevice(CHANGED_PASSWORD);
    await page.reload();
    await page.locator("#sessions li").nth(2).waitFor();
    expect(await page.locator("#sessions li").first().getAttribute("data-current")).toBe("true");
    expect(await page.locator("#current-session").textContent()).toBe("This device");
    await checkPage(page, "sessions", "sessions");
    await page.locator("#sessions li:not([data-current]) button").first().click();
    await page.locator("#notice", { hasText: "iOS is signed out." }).waitFor();
    expect(await page.locator("#sessions li").count()).toBe(2); // the list is reloaded before the notice
    await page.locator("#revoke-others").click();
    await page.locator("#notice", { hasText: "Every other session is signed out." }).waitFor();
    await page.waitForFunction(() => document.querySelectorAll("#sessions li").length === 1);
    expect(await page.locator("#revoke-others").isHidden()).toBe(true);
  });

  it("the old inbox's link takes the account back: every session ends, and the clicker chooses a new password", async () => {
    const oldEmail = "ada@example.com";
    await mailbox.goto(revertLink);
    await mailbox.getByText(`comes back to ${oldEmail}`).waitFor();
    await mailbox.getByRole("button", { name: "Take my account back" }).click();
    // Identity sends the clicker to the web app's reset page with a fresh token.
    await mailbox.locator("#reset-form").waitFor();
    await mailbox.locator("#reset-form input[name=newPassword]").fill(TAKEN_BACK_PASSWORD);
    await mailbox.locator("#reset-form button[type=submit]").click();
    await mailbox.locator("#notice", { hasText: "Your password is changed. Sign in with the new one." }).waitFor();

    // The session of whoever moved the account ended with the revert.
    await page.reload();
    await page.locator("#signin-form").waitFor();
    expect(await storedToken(page)).toBeNull();
    await signIn(email, CHANGED_PASSWORD);
    await page.locator("#signin-form .form-error:not(:empty)").waitFor();
    email = oldEmail;
    await signIn(email, TAKEN_BACK_PASSWORD);
    await page.locator("#task-list[data-loaded]").waitFor({ state: "attached" });
    expect(await page.locator("#whoami").textContent()).toBe(email);
  });

  it("delete account: password and a confirmation dialog, then signed out", async () => {
    await page.locator("#nav-account").click();
    await page.locator("#delete-form input[name=password]").fill(TAKEN_BACK_PASSWORD);
    await page.locator("#delete-form button[type=submit]").click();
    await page.locator("#confirm-dialog").waitFor();
    await checkPage(page, "delete account dialog", "delete-account");
    await page.locator("#confirm-cancel").click();
    expect(await page.locator("#profile-form").isVisible()).toBe(true);

    await page.locator("#delete-form button[type=submit]").click();
    await page.locator("#confirm-ok").click();
    await page.locator("#signin-form").waitFor();
    expect(await notice()).toBe("Your account is deleted.");
    expect(await storedToken(page)).toBeNull();
    expect(await page.locator("#alert").isHidden()).toBe(true);
    await signIn(email, TAKEN_BACK_PASSWORD);
    await page.locator("#signin-form .form-error", { hasText: "That email and password do not match an account." }).waitFor();
    expect(problems).toEqual([]);
  });
});
