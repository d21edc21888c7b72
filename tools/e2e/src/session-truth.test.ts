import { type CaughtMail, type MailCatcher, startMailCatcher } from "@app/mailer/catcher";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type E2eStack, freshEmail, openBrowser, STARTUP_MS, startE2eStack, storedToken, TEST_MS, WAIT_MS } from "./harness.js";
import { createTaskThroughPage, expectSignedOut, signInThroughPage, twoContexts } from "./two-browsers.js";

// Issue 21, "Signing out must sign out our own clients": each of the five ways of ending another
// session, done in one browser, signs the app out in a second one (its own context: cookies and
// storage of its own). The web server checks every second (SESSION_RECHECK_SECONDS=1), so the
// test polls for the signed-out page instead of waiting a minute.
let catcher: MailCatcher;
let env: E2eStack;
let browser: Browser;
const PASSWORD = "correct horse battery";
/** Uncaught page errors (a CSP violation or a crash in the signed-out path shows up here). */
const problems: string[] = [];

beforeAll(async () => {
  catcher = await startMailCatcher({ port: 0 });
  [env, { browser }] = await Promise.all([startE2eStack({ SMTP_URL: catcher.url, SESSION_RECHECK_SECONDS: "1" }), openBrowser()]);
}, STARTUP_MS);
afterAll(async () => {
  await browser?.close();
  await env?.stop();
  await catcher?.close();
});

async function signUp(email: string): Promise<void> {
  const res = await fetch(`${env.baseUrl}/api/auth/sign-up/email`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email, password: PASSWORD, name: "Two Browsers" }),
  });
  expect(res.status).toBe(200);
}

/**
 * One account signed in on two browsers; the other one creates a task (so it worked), opens
 * `thereRoute` (`task`: that task's page, following it live), and `act` ends its session from
 * `here`. The other one must end on the signed-out page, unable to create a task; `here` stays
 * signed in unless `act` signed it out too.
 */
async function endsElsewhere(thereRoute: string, act: (here: Page, email: string) => Promise<void>, hereStays: boolean): Promise<void> {
  const email = freshEmail("two");
  await signUp(email);
  const { here, there, close } = await twoContexts(browser);
  for (const page of [here, there]) page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  try {
    await signInThroughPage(here, env.webUrl, email, PASSWORD);
    await signInThroughPage(there, env.webUrl, email, PASSWORD);
    const title = "made before the other browser acted";
    await createTaskThroughPage(there, title);
    if (thereRoute === "task") {
      await there.locator("#task-list li a", { hasText: title }).first().click();
      await there.locator('#live-status[data-state="live"]').waitFor();
    } else {
      await there.evaluate((route) => {
        location.hash = route;
      }, thereRoute);
    }
    await there.locator("#whoami").waitFor();
    await act(here, email);
    await expectSignedOut(there);
    if (hereStays) {
      expect(await here.locator("#whoami").textContent()).toBe(email);
      expect(await storedToken(here)).not.toBeNull();
    }
    expect(problems).toEqual([]);
  } finally {
    await close();
  }
}

/** The link (containing `part`) of the newest mail to `to` that carries one. */
async function mailedLink(to: string, part: string): Promise<string> {
  const mail: CaughtMail = await catcher.waitFor((m) => m.to.includes(to) && m.links.some((l) => l.includes(part)), 15_000);
  return mail.links.find((l) => l.includes(part)) ?? "";
}

describe("ending a session in one browser signs the app out in another", { timeout: TEST_MS }, () => {
  it('"Sign out everywhere else" (the other browser on the task list)', async () => {
    await endsElsewhere(
      "#/tasks",
      async (here) => {
        await here.evaluate(() => {
          location.hash = "#/sessions";
        });
        await here.locator("#sessions li").nth(1).waitFor();
        expect(await here.locator("#token-words").textContent()).toContain("keeps working until it expires, up to 30 days");
        expect(await here.locator("main").textContent()).toContain("This app signs out on your other devices within a second");
        await here.locator("#revoke-others").click();
        await here.locator("#notice", { hasText: "Every other session is signed out" }).waitFor();
      },
      true,
    );
  });

  it('a password change with "Sign out my other sessions" (the other browser on a task page, live)', async () => {
    await endsElsewhere(
      "task",
      async (here) => {
        await here.locator("#nav-account").click();
        await here.locator("#password-form input[name=currentPassword]").fill(PASSWORD);
        await here.locator("#password-form input[name=newPassword]").fill("a changed password 2");
        expect(await here.locator("#revoke-other-sessions").isChecked()).toBe(true);
        await here.locator("#password-form button[type=submit]").click();
        await here.locator("#notice", { hasText: "your other sessions are signed out" }).waitFor();
      },
      true,
    );
  });

  it("a password reset from the mailed link (the other browser on the projects page)", async () => {
    await endsElsewhere(
      "#/projects",
      async (here, email) => {
        await here.locator("#sign-out").click();
        await here.locator("#forgot-password-link").click();
        await here.locator("#forgot-form input[name=email]").fill(email);
        await here.locator("#forgot-form button[type=submit]").click();
        await here.locator("#forgot-sent").waitFor();
        await here.goto(await mailedLink(email, "/reset-password/"));
        expect(await here.locator("#token-words").textContent()).toContain("docs/accounts.md");
        await here.locator("#reset-form input[name=newPassword]").fill("a reset password 3");
        await here.locator("#reset-form button[type=submit]").click();
        await here.locator("#notice", { hasText: "Your password is changed. Sign in with the new one." }).waitFor();
      },
      false,
    );
  });

  it("a session signed out from the list (the other browser on the account page)", async () => {
    await endsElsewhere(
      "#/account",
      async (here) => {
        await here.evaluate(() => {
          location.hash = "#/sessions";
        });
        await here.locator("#sessions li").nth(1).waitFor();
        await here.locator("#sessions li:not([data-current]) button").first().click();
        await here.locator("#notice", { hasText: "is signed out" }).waitFor();
      },
      true,
    );
  });

  it("a deleted account (the other browser on the sessions page)", async () => {
    await endsElsewhere(
      "#/sessions",
      async (here) => {
        await here.locator("#nav-account").click();
        await here.locator("#delete-form input[name=password]").fill(PASSWORD);
        await here.locator("#delete-form button[type=submit]").click();
        await here.locator("#confirm-ok").click();
        await here.locator("#notice", { hasText: "Your account is deleted." }).waitFor();
      },
      false,
    );
  });
});

describe("what does not sign out, and when the check runs", { timeout: TEST_MS }, () => {
  it("identity unreachable keeps the app signed in; its answer 'no session' then signs it out", async () => {
    const email = freshEmail("offline");
    await signUp(email);
    const { here, there, close } = await twoContexts(browser);
    try {
      await signInThroughPage(here, env.webUrl, email, PASSWORD);
      await signInThroughPage(there, env.webUrl, email, PASSWORD);
      let refused = 0;
      await there.route("**/api/auth/get-session", async (route) => {
        refused += 1;
        await route.abort("internetdisconnected");
      });
      await here.evaluate(() => {
        location.hash = "#/sessions";
      });
      await here.locator("#sessions li").nth(1).waitFor();
      await here.locator("#revoke-others").click();
      await here.locator("#notice", { hasText: "Every other session is signed out" }).waitFor();
      // Three checks found identity unreachable: still signed in, JWT kept, tasks still made.
      await expect.poll(() => refused, { timeout: WAIT_MS, interval: 100 }).toBeGreaterThanOrEqual(3);
      expect(await there.locator("#whoami").textContent()).toBe(email);
      expect(await storedToken(there)).not.toBeNull();
      await there.unroute("**/api/auth/get-session");
      await expectSignedOut(there);
    } finally {
      await close();
    }
  });

  it("a 401 a page meets, with identity unable to cure it, opens the same signed-out page (never half signed in)", async () => {
    const email = freshEmail("refused");
    await signUp(email);
    const { there, close } = await twoContexts(browser);
    try {
      await signInThroughPage(there, env.webUrl, email, PASSWORD);
      let refused = 0;
      await there.route("**/api/auth/get-session", (route) => {
        refused += 1;
        return route.abort("internetdisconnected");
      });
      // Checks run one at a time: once one has met the outage, none that started before it can
      // still store a fresh JWT over the refused one below.
      await expect.poll(() => refused, { timeout: 10_000 }).toBeGreaterThan(0);
      // The API refuses this token; get-session, which would bring a fresh one, cannot be reached.
      await there.evaluate(() => {
        localStorage.setItem("authToken", "not.a.token");
        location.hash = "#/projects";
      });
      await expectSignedOut(there);
    } finally {
      await close();
    }
  });

  it("with an hour between checks, the window regaining focus checks at once", async () => {
    const email = freshEmail("focus");
    await signUp(email);
    const { here, there, close } = await twoContexts(browser);
    try {
      // This browser gets the web server's /config.js with an hour between checks.
      await there.route("**/config.js", async (route) => {
        const body = (await (await route.fetch()).text()).replace('"sessionRecheckSeconds":1', '"sessionRecheckSeconds":3600');
        await route.fulfill({ body, contentType: "text/javascript" });
      });
      await signInThroughPage(here, env.webUrl, email, PASSWORD);
      await signInThroughPage(there, env.webUrl, email, PASSWORD);
      expect(await there.evaluate(() => JSON.stringify((window as { __CONFIG__?: unknown }).__CONFIG__))).toContain(
        '"sessionRecheckSeconds":3600',
      );
      await here.evaluate(() => {
        location.hash = "#/sessions";
      });
      await here.locator("#sessions li").nth(1).waitFor();
      await here.locator("#revoke-others").click();
      await here.locator("#notice", { hasText: "Every other session is signed out" }).waitFor();
      expect(await there.locator("#whoami").textContent()).toBe(email);
      await there.evaluate(() => window.dispatchEvent(new Event("focus")));
      await expectSignedOut(there);
    } finally {
      await close();
    }
  });
});
