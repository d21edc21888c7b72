import { type CaughtMail, type MailCatcher, startMailCatcher } from "@app/mailer/catcher";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type E2eStack, openBrowser, pageFetch, STARTUP_MS, startE2eStack, storedToken, TEST_MS } from "./harness.js";
import { checkPage } from "./page-checks.js";
import { longName } from "./seed.js";
import { twoContexts } from "./two-browsers.js";

// Organizations in Chromium against the real stack: Ada founds an organization and a shared
// project and invites Bob; the invitation travels by real SMTP to a catcher; Bob opens its link
// signed out, signs up on the invitation page, confirms his address and accepts; both see the
// shared project; Ada removes Bob, and his next request is refused.
let catcher: MailCatcher;
let env: E2eStack;
let browser: Browser;
let ada: Page;
let bob: Page;
let closeContexts: () => Promise<void>;
/** Uncaught page errors and console errors of either browser (a CSP violation shows up here). */
const problems: string[] = [];
// Fixed addresses (each test file has its own database), so the screenshots do not change between runs.
const ADA = "ada@example.com";
const BOB = "bob@example.com";
const PASSWORD = "correct horse battery";
/** A long organization name, as page checks want real content. */
const ORGANIZATION = longName(1);
const PROJECT = "Spring relaunch: shared plan";
let invitationPath = "";

beforeAll(async () => {
  catcher = await startMailCatcher({ port: 0 });
  let opened: Awaited<ReturnType<typeof openBrowser>>;
  [env, opened] = await Promise.all([startE2eStack({ SMTP_URL: catcher.url }), openBrowser()]);
  browser = opened.browser;
  const contexts = await twoContexts(browser);
  ({ here: ada, there: bob, close: closeContexts } = contexts);
  for (const page of [ada, bob]) {
    page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
    page.on("console", (message) => {
      if (message.type() === "error" && !message.text().startsWith("Failed to load resource")) problems.push(message.text());
    });
  }
}, STARTUP_MS);
afterAll(async () => {
  await closeContexts?.();
  await browser?.close();
  await env?.stop();
  await catcher?.close();
});

const used = new Set<number>();
/** The first mail to `to` with a link containing `part` that this file has not read yet; answers that link. */
async function mailedLink(to: string, part: string): Promise<string> {
  const mail: CaughtMail = await catcher.waitFor(
    (m) => !used.has(m.id) && m.to.includes(to) && m.links.some((l) => l.includes(part)),
    15_000,
  );
  used.add(mail.id);
  return mail.links.find((l) => l.includes(part)) ?? "";
}

async function go(page: Page, hash: string): Promise<void> {
  await page.evaluate((route) => {
    location.hash = route;
  }, hash);
}

describe("organizations in Chromium, against the real stack", { timeout: TEST_MS }, () => {
  it("Ada creates an organization: the header's switcher works in it, and the page lists her as its owner", async () => {
    await ada.goto(env.webUrl);
    await ada.locator("#signup-form input[name=name]").fill("Ada Lovelace");
    await ada.locator("#signup-form input[name=email]").fill(ADA);
    await ada.locator("#signup-form input[name=password]").fill(PASSWORD);
    await ada.locator("#signup-form button[type=submit]").click();
    await ada.locator("#task-list[data-loaded]").waitFor({ state: "attached" });
    expect(await ada.locator("#org-switcher").count()).toBe(0); // in no organization yet

    await ada.locator("#nav-organization").click();
    await ada.locator("#organization-body[data-state=none]").waitFor();
    await checkPage(ada, "organization page, none active", "organization-none");
    await ada.locator("#create-organization input[name=name]").fill(ORGANIZATION);
    expect(await ada.locator("#create-organization input[name=slug]").inputValue()).toMatch(/^donaudampf[a-z0-9-]+$/);
    await ada.locator("#create-organization button[type=submit]").click();
    await ada.locator("#organization-body[data-state=ready]").waitFor();
    expect(await ada.locator("#organization-title").textContent()).toBe(ORGANIZATION);
    expect(await ada.locator("#organization-role").textContent()).toBe("You are an owner of this organization.");
    expect(await ada.locator("#member-list li .member-role").allTextContents()).toEqual(["owner"]);
    expect(await ada.locator("#org-switcher option:checked").textContent()).toBe(ORGANIZATION);
  });

  it("her projects page lists and creates the organization's projects; the switcher goes back to her own", async () => {
    await ada.locator("#nav-projects").click();
    await ada.locator("#projects-scope", { hasText: "Shared in" }).waitFor();
    await ada.locator("#project-list-empty").waitFor();
    await ada.locator("#create-project input[name=name]").fill(PROJECT);
    await ada.locator("#create-project button[type=submit]").click();
    await ada.locator("#project-list li", { hasText: PROJECT }).waitFor();
    await checkPage(ada, "projects of an organization", "projects-organization");
    // Her own projects are another list.
    await ada.locator("#org-switcher").selectOption({ label: "Personal" });
    await ada.locator("#notice", { hasText: "You are working on your own." }).waitFor();
    await ada.locator("#projects-scope", { hasText: "Your own projects" }).waitFor();
    await ada.locator("#project-list-empty").waitFor();
    await ada.locator("#org-switcher").selectOption({ label: ORGANIZATION });
    await ada.locator("#project-list li", { hasText: PROJECT }).waitFor();
  });

  it("she invites Bob; the invitation shows as pending", async () => {
    await ada.locator("#nav-organization").click();
    await ada.locator("#invite-form input[name=email]").fill(BOB);
    await ada.locator("#invite-form select[name=role]").selectOption("member");
    await ada.locator("#invite-form button[type=submit]").click();
    await ada.locator("#notice", { hasText: `We mailed an invitation to ${BOB}.` }).waitFor();
    await ada.locator("#invitation-list li", { hasText: BOB }).waitFor();
    await checkPage(ada, "organization page of its owner", "organization-owner");
    const link = new URL(await mailedLink(BOB, "/accept-invitation/"));
    invitationPath = link.pathname;
    expect(invitationPath).toMatch(/^\/accept-invitation\/[^/]+$/);
    // The link opens the web app's page (soft: the rest of the flow still runs on the web app's origin).
    expect.soft(link.origin, "the invitation mail links to the web app").toBe(new URL(env.webUrl).origin);
  });

  it("Bob opens the link signed out, signs up there, confirms his address and accepts; he sees the shared project", async () => {
    await bob.goto(`${env.webUrl}${invitationPath}`);
    await bob.locator("#invitation-sign-in").waitFor();
    expect(new URL(bob.url()).pathname).toBe("/"); // the landing path left the address bar
    await checkPage(bob, "invitation, signed out", "invitation-signed-out");
    await bob.locator("#signup-form input[name=name]").fill("Bob Babbage");
    await bob.locator("#signup-form input[name=email]").fill(BOB);
    await bob.locator("#signup-form input[name=password]").fill(PASSWORD);
    await bob.locator("#signup-form button[type=submit]").click();
    // Back on the invitation, which waits for a confirmed address.
    await bob.locator("#invitation-problem", { hasText: "Confirm your email address first" }).waitFor();
    expect(await bob.locator("#whoami").textContent()).toBe(BOB);
    await bob.goto(await mailedLink(BOB, "/verify-email"));
    await bob.locator("#notice", { hasText: "Your email address is verified." }).waitFor();
    await bob.locator("#invitation-text", { hasText: `${ADA} invited you to join ${ORGANIZATION} as a member.` }).waitFor();
    await checkPage(bob, "invitation, signed in", "invitation");
    await bob.locator("#accept-invitation").click();
    await bob.locator("#notice", { hasText: `You joined ${ORGANIZATION}.` }).waitFor();
    await bob.locator("#project-list li", { hasText: PROJECT }).waitFor();
    expect(await bob.locator("#org-switcher option:checked").textContent()).toBe(ORGANIZATION);
  });

  it("Ada sees Bob as a member, puts him on a team; both see the shared project", async () => {
    await go(ada, "#/projects");
    await go(ada, "#/organization");
    await ada.locator("#member-list li", { hasText: BOB }).waitFor();
    await ada.locator("#create-team input[name=name]").fill("Research");
    await ada.locator("#create-team button[type=submit]").click();
    const team = ada.locator("#team-list li.team", { hasText: "Research" });
    const add = team.getByRole("form", { name: "Add a member to Research" });
    await add.locator("select").selectOption({ label: "Bob Babbage" });
    await add.locator("button[type=submit]").click();
    await ada.locator("#notice", { hasText: "Added to Research." }).waitFor();
    await checkPage(ada, "organization page with a member and a team", "organization-team");
    await go(ada, "#/projects");
    await ada.locator("#project-list li", { hasText: PROJECT }).waitFor();
    await go(bob, "#/organization");
    await bob.locator("#organization-role", { hasText: "You are a member" }).waitFor();
    expect(await bob.locator("#invite-form").count()).toBe(0); // a member invites nobody
    await checkPage(bob, "organization page of a member", "organization-member");
  });

  it("Ada removes Bob: his next request is refused with the same token, and his page says why", async () => {
    const bobToken = await storedToken(bob);
    await go(ada, "#/organization");
    await ada.locator("#member-list li", { hasText: BOB }).getByRole("button", { name: "Remove Bob Babbage" }).click();
    await ada.locator("#confirm-ok").click();
    await ada.locator("#notice", { hasText: "Bob Babbage is removed" }).waitFor();
    expect(await ada.locator("#member-list li").count()).toBe(1);

    await go(bob, "#/tasks");
    await go(bob, "#/projects");
    await bob.locator("#project-list-error", { hasText: "You are not a member of this organization any more" }).waitFor();
    expect(await storedToken(bob)).toBe(bobToken);
    const orgId = await ada.evaluate(() => (document.querySelector("#org-switcher") as HTMLSelectElement).value);
    const refused = await pageFetch(bob, `${env.baseUrl}/api/projects?organizationId=${encodeURIComponent(orgId)}`, {
      headers: { authorization: `Bearer ${bobToken}` },
      credentials: "omit",
    });
    expect(refused.status).toBe(404);
    // The header forgets the organization.
    await bob.locator("#org-switcher").waitFor({ state: "detached" });
    expect(problems).toEqual([]);
  });
});
