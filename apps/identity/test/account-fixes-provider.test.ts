import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ORIGIN } from "./kit.js";
import { linkOf, type MailKit, mailKit } from "./mail-kit.js";
import { Browser, providerStack, type TestProvider } from "./oidc-kit.js";

// Accounts that signed up with a provider only (no password), through a real OpenID Provider,
// real PostgreSQL and real SMTP: the reset creates their password, and delete-user works without
// one, on a fresh session or through the mailed link a stale session gets (docs/accounts.md).
const HOUR = 60 * 60 * 1000;
const DELETE_SUBJECT = "Confirm deleting your account";
let baseUrl: string;
let provider: TestProvider;
let kit: MailKit;
let stop: (() => Promise<void>) | undefined;
/** The app's clock runs with real time plus this offset (the link's expiry test moves it). */
let offset = 0;

beforeAll(async () => {
  ({ baseUrl, provider, kit, close: stop } = await providerStack((env) => mailKit({ now: () => Date.now() + offset, env })));
});
afterAll(() => stop?.());

const json = { "content-type": "application/json", origin: ORIGIN, accept: "application/json" };

async function post(browser: Browser, path: string, body: unknown = {}) {
  const res = await browser.request(`${baseUrl}/api/auth${path}`, { method: "POST", headers: json, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function get(browser: Browser, path: string) {
  const res = await browser.request(`${baseUrl}/api/auth${path}`, { headers: { accept: "application/json" } });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** Opens a mailed link in `browser` as a click does (HTML preferred), without following the redirect. */
function click(browser: Browser, link: string) {
  const url = new URL(link);
  return browser.request(`${baseUrl}${url.pathname}${url.search}`, { headers: { accept: "text/html,application/xhtml+xml" } });
}

let n = 0;
/** A new account made by signing in at the provider; the browser holds its session. */
async function providerOnly(): Promise<{ browser: Browser; email: string; userId: string }> {
  n += 1;
  const email = `provider-only-${n}-${Date.now()}@example.com`;
  const browser = new Browser();
  provider.loginAs({ sub: `sub-${n}-${Date.now()}`, email, email_verified: true, name: "Provider Only" });
  const { body } = await post(browser, "/sign-in/social", { provider: "local", callbackURL: `${ORIGIN}/` });
  const landed = await browser.follow(String(body.url), (u) => u.origin === ORIGIN);
  expect(landed.searchParams.get("error")).toBeNull();
  const session = await get(browser, "/get-session");
  const userId = (session.body.user as { id: string }).id;
  expect(await kit.db.prisma.account.findMany({ where: { userId }, select: { providerId: true } })).toEqual([{ providerId: "local" }]);
  return { browser, email, userId };
}

/** Makes every session of the user older than DELETE_FRESH_AGE (its default, a day). */
async function stale(userId: string): Promise<void> {
  await kit.db.prisma.session.updateMany({ where: { userId }, data: { createdAt: new Date(Date.now() + offset - 25 * HOUR) } });
}

async function deleted(userId: string): Promise<boolean> {
  const [user, deletion] = await Promise.all([
    kit.db.prisma.user.findUnique({ where: { id: userId } }),
    kit.db.prisma.userDeletion.findUnique({ where: { userId } }),
  ]);
  return deletion !== null && user?.email === `deleted-${userId}@deleted.invalid`;
}

describe("a provider-only account's password reset", () => {
  it("creates the password, with which the user then signs in", async () => {
    const { email, userId } = await providerOnly();
    const anonymous = new Browser();
    expect((await post(anonymous, "/request-password-reset", { email, redirectTo: `${ORIGIN}/reset-password` })).status).toBe(200);
    const hop = await anonymous.request(linkOf(await kit.mailTo(email, "Reset your password")));
    const token = new URL(hop.headers.get("location") ?? "").searchParams.get("token");
    expect(await post(anonymous, "/reset-password", { token, newPassword: "a brand new password" })).toEqual({
      status: 200,
      body: { status: true },
    });
    const credential = await kit.db.prisma.account.findFirst({ where: { userId, providerId: "credential" } });
    expect(credential?.passwordHash).toBeTruthy();
    const signedIn = await post(new Browser(), "/sign-in/email", { email, password: "a brand new password" });
    expect(signedIn.status).toBe(200);
    expect((signedIn.body.user as { id: string }).id).toBe(userId);
  });
});

describe("a provider-only account's delete-user", () => {
  it("deletes on a fresh session without a password, through the deletion path", async () => {
    const { browser, userId } = await providerOnly();
    expect(await post(browser, "/delete-user", {})).toEqual({ status: 200, body: { success: true, message: "User deleted" } });
    expect(await deleted(userId)).toBe(true);
    expect(await kit.db.prisma.session.count({ where: { userId } })).toBe(0);
    expect(await kit.db.prisma.account.count({ where: { userId } })).toBe(0);
    expect((await get(browser, "/get-session")).body).toBeNull();
  });

  it("mails a link on a stale session; the link deletes where the user is signed in, once", async () => {
    const { browser, email, userId } = await providerOnly();
    await stale(userId);
    const callbackURL = `${ORIGIN}/goodbye`;
    expect(await post(browser, "/delete-user", { callbackURL })).toEqual({
      status: 200,
      body: { success: true, message: "Verification email sent" },
    });
    expect(await deleted(userId)).toBe(false);
    const link = linkOf(await kit.mailTo(email, DELETE_SUBJECT));
    expect(new URL(link).pathname).toBe("/api/auth/delete-user/callback");
    expect(new URL(link).searchParams.get("callbackURL")).toBe(callbackURL);

    // Where the user is not signed in (a mail scanner, another device) it deletes nothing.
    const elsewhere = await click(new Browser(), link);
    expect(elsewhere.status).toBe(401);
    expect(await elsewhere.text()).toContain("Sign in to delete your account");
    expect(await get(new Browser(), `/delete-user/callback${new URL(link).search}`)).toMatchObject({
      status: 401,
      body: { code: "unauthorized" },
    });
    expect(await deleted(userId)).toBe(false);

    // Two clicks at once in the user's browser: one deletes, the other finds the link used.
    const [first, second] = await Promise.all([click(browser, link), click(browser, link)]);
    const outcomes = [first, second].map((res) => [res.status, res.headers.get("location")]);
    expect(outcomes).toContainEqual([302, callbackURL]);
    expect(outcomes.filter(([, location]) => location === callbackURL)).toHaveLength(1);
    expect(await deleted(userId)).toBe(true);
    expect((await get(browser, "/get-session")).body).toBeNull();
    expect(await kit.db.prisma.verification.count({ where: { userId } })).toBe(0);
  });

  it("refuses a link that expired (an hour) or that another account was sent, and deletes nothing", async () => {
    const owner = await providerOnly();
    const other = await providerOnly();
    await stale(owner.userId);
    await post(owner.browser, "/delete-user", {});
    const link = linkOf(await kit.mailTo(owner.email, DELETE_SUBJECT));
    expect(new URL(link).searchParams.has("callbackURL")).toBe(false);

    const foreign = await click(other.browser, link);
    expect([foreign.status, await foreign.text()]).toEqual([400, expect.stringContaining("This link is invalid or has expired")]);
    expect(await post(other.browser, "/delete-user", { token: new URL(link).searchParams.get("token") })).toMatchObject({
      status: 400,
      body: { code: "invalid_token" },
    });
    expect(await deleted(other.userId)).toBe(false);

    offset += HOUR + 60_000;
    try {
      const expired = await get(owner.browser, `/delete-user/callback${new URL(link).search}`);
      expect(expired).toMatchObject({ status: 400, body: { code: "invalid_token" } });
      expect(await deleted(owner.userId)).toBe(false);
      // A new request mails a new link, which works (a page, without a callback).
      await post(owner.browser, "/delete-user", {});
      const next = linkOf(
        await kit.catcher.waitFor((m) => m.to.includes(owner.email) && m.subject === DELETE_SUBJECT && m.links[0] !== link),
      );
      const done = await click(owner.browser, next);
      expect([done.status, await done.text()]).toEqual([200, expect.stringContaining("Your account is deleted")]);
      expect(await deleted(owner.userId)).toBe(true);
    } finally {
      offset = 0;
    }
  });
});
