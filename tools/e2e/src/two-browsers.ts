import type { Browser, Page } from "playwright-core";
import { expect } from "vitest";
import { storedToken, WAIT_MS } from "./harness.js";

/**
 * Two independent browsers in one Chromium: two contexts, each with its own cookies and
 * `localStorage`, as a laptop and a phone signed in to the same account would be.
 */
export async function twoContexts(browser: Browser): Promise<{ here: Page; there: Page; close(): Promise<void> }> {
  const open = async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    context.setDefaultTimeout(WAIT_MS);
    return context;
  };
  const [first, second] = await Promise.all([open(), open()]);
  const [here, there] = await Promise.all([first.newPage(), second.newPage()]);
  return {
    here,
    there,
    async close() {
      await Promise.all([first.close(), second.close()]);
    },
  };
}

/** Signs in through the sign-in form and waits for the task list. */
export async function signInThroughPage(page: Page, webUrl: string, email: string, password: string): Promise<void> {
  await page.goto(webUrl);
  await page.locator("#signin-form input[name=email]").fill(email);
  await page.locator("#signin-form input[name=password]").fill(password);
  await page.locator("#signin-form button[type=submit]").click();
  await page.locator("#task-list[data-loaded]").waitFor({ state: "attached" });
}

/** Creates a task with the task page's form and waits for its row. */
export async function createTaskThroughPage(page: Page, title: string): Promise<void> {
  await page.evaluate(() => {
    location.hash = "#/tasks";
  });
  await page.locator("#create-task input[name=title]").fill(title);
  await page.locator("#create-task button[type=submit]").click();
  await page.locator("#task-list li", { hasText: title }).first().waitFor();
}

/** The sentence of the signed-out page after a session ended anywhere but this page's buttons. */
export const SESSION_ENDED_SENTENCE = "Your session has ended. Sign in again.";

/**
 * Waits (polling, up to WAIT_MS) for the one signed-out state: the sign-in page with the
 * session-ended sentence, a header without the user, no stored JWT; then checks that the app
 * offers no way to create a task any more (the task page sends it back to sign-in).
 */
export async function expectSignedOut(page: Page): Promise<void> {
  await page.locator("#signin-form").waitFor();
  await page.locator("#alert", { hasText: SESSION_ENDED_SENTENCE }).waitFor();
  expect(await page.locator("#whoami, #sign-out, #nav-tasks").count()).toBe(0);
  expect(await storedToken(page)).toBeNull();
  await page.evaluate(() => {
    location.hash = "#/tasks";
  });
  await page.locator("#signin-form").waitFor();
  expect(await page.locator("#create-task").count()).toBe(0);
  expect(await page.evaluate(() => document.querySelector("main")?.dataset.view)).toBe("signin");
}
