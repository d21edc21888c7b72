import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { identityKit, type Kit, ORIGIN } from "./kit.js";
import { linkOf, type MailKit, mailKit } from "./mail-kit.js";
import { Browser, startProvider, type TestProvider } from "./oidc-kit.js";

// Issue 20 items 1 and 2, through a real OpenID Provider, real SMTP and real HTTP: whoever
// registers an address first keeps nothing once the address's owner proves it, and a provider
// that does not vouch for an address claims nothing.
const CLIENT = { clientId: "identity-test", clientSecret: "identity-test-secret-0123456789" };
const CALLBACK = `${ORIGIN}/home`;
const ERROR_CALLBACK = `${ORIGIN}/sign-in`;
const SQUATTER_PASSWORD = "squatter password 1";

let server: Server;
let baseUrl: string;
let provider: TestProvider;
let kit: MailKit;
let env: Record<string, string>;
/** The app the listening server hands requests to (a test may swap in another configuration). */
let handler: Kit["app"];
let n = 0;

beforeAll(async () => {
  server = createServer((req, res) => handler(req, res));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  provider = await startProvider({ ...CLIENT, redirectUri: `${baseUrl}/api/auth/callback/local` });
  env = {
    BASE_URL: baseUrl,
    OIDC_PROVIDERS: "local",
    OIDC_LOCAL_ISSUER: provider.issuer,
    OIDC_LOCAL_CLIENT_ID: CLIENT.clientId,
    OIDC_LOCAL_CLIENT_SECRET: CLIENT.clientSecret,
  };
  kit = await mailKit({ env });
  handler = kit.app;
});

afterAll(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => server?.close(() => resolve()));
  await provider?.close();
  await kit?.close();
});

function fresh(label: string): string {
  n += 1;
  return `${label}-${n}-${Date.now()}@example.com`;
}

async function post(browser: Browser, path: string, body: unknown) {
  const res = await browser.request(`${baseUrl}/api/auth${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: ORIGIN },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : null) as Record<string, unknown> };
}

/** Signs in through the provider as `email`; returns where the browser landed. */
async function providerSignIn(browser: Browser, email: string, emailVerified: boolean, sub = `sub-${email}`): Promise<URL> {
  provider.loginAs({ sub, email, email_verified: emailVerified, name: "Provider User" });
  const { status, body } = await post(browser, "/sign-in/social", {
    provider: "local",
    callbackURL: CALLBACK,
    errorCallbackURL: ERROR_CALLBACK,
  });
  expect(status).toBe(200);
  return browser.follow(String(body.url), (u) => u.origin === ORIGIN);
}

const signedIn = async (browser: Browser) =>
  (await browser.request(`${baseUrl}/api/auth/get-session`, { method: "POST", headers: { origin: ORIGIN } })).status === 200;

async function rowsOf(email: string) {
  const user = await kit.db.prisma.user.findUniqueOrThrow({ where: { email } });
  const accounts = await kit.db.prisma.account.findMany({ where: { userId: user.id } });
  return {
    user,
    providers: accounts.map((a) => a.providerId).sort(),
    sessions: await kit.db.prisma.session.count({ where: { userId: user.id } }),
    // Pending links only: a used verification link stays marked until it expires (services/mail-tokens.ts).
    links: await kit.db.prisma.verification.count({ where: { userId: user.id, NOT: { purpose: { startsWith: "spent:" } } } }),
  };
}

/** The squatter: signs up first with someone else's address and holds a session, a JWT and a pending link. */
async function squat(email: string): Promise<Browser> {
  const squatter = new Browser();
  const signUp = { email, password: SQUATTER_PASSWORD, name: "Squatter", callbackURL: `${ORIGIN}/?verified=1` };
  expect((await post(squatter, "/sign-up/email", signUp)).status).toBe(200);
  expect((await squatter.request(`${baseUrl}/api/auth/token`)).status).toBe(200);
  expect((await post(squatter, "/change-email", { newEmail: fresh("squatter-elsewhere") })).status).toBe(200);
  return squatter;
}

describe("a provider sign-in never reaches an account whose address nobody proved (item 1)", () => {
  it("refuses with account_not_linked; the owner's reset link ends everything the squatter held; the provider then links", async () => {
    const email = fresh("owner");
    const squatter = await squat(email);
    const owner = new Browser();
    const landed = await providerSignIn(owner, email, true);
    expect(landed.href).toBe(`${ERROR_CALLBACK}?error=account_not_linked`);
    expect(await signedIn(owner)).toBe(false);
    const before = await rowsOf(email);
    expect(before).toMatchObject({ providers: ["credential"], sessions: 1 });
    expect(before.user.emailVerified).toBe(false);
    expect(before.links).toBeGreaterThan(0);

    // The way forward: recover through the mailbox.
    await kit.mailTo(email, "Verify"); // the sign-up's verification mail is not the owner's way in here
    expect((await post(owner, "/request-password-reset", { email, redirectTo: `${ORIGIN}/reset-password` })).status).toBe(200);
    const hop = await owner.request(linkOf(await kit.mailTo(email, "Reset")));
    const token = new URL(hop.headers.get("location") ?? "").searchParams.get("token") ?? "";
    expect((await post(owner, "/reset-password", { token, newPassword: "the owner's own password" })).status).toBe(200);

    const after = await rowsOf(email);
    expect(after).toMatchObject({ providers: ["credential"], sessions: 0, links: 0 });
    expect(after.user.emailVerified).toBe(true);
    expect(await signedIn(squatter)).toBe(false);
    expect((await post(new Browser(), "/sign-in/email", { email, password: SQUATTER_PASSWORD })).status).toBe(401);

    // The address is proven now: the provider identity links to the account and signs in.
    const again = new Browser();
    expect((await providerSignIn(again, email, true)).href).toBe(CALLBACK);
    expect(await signedIn(again)).toBe(true);
    expect((await rowsOf(email)).providers).toEqual(["credential", "local"]);
  });

  it("refuses the same with REQUIRE_EMAIL_VERIFICATION=true", async () => {
    const strict = await identityKit({ database: kit.database, env: { ...env, REQUIRE_EMAIL_VERIFICATION: "true" } });
    handler = strict.app;
    try {
      const email = fresh("strict-owner");
      expect((await post(new Browser(), "/sign-up/email", { email, password: SQUATTER_PASSWORD, name: "Squatter" })).status).toBe(200);
      const owner = new Browser();
      expect((await providerSignIn(owner, email, true)).href).toBe(`${ERROR_CALLBACK}?error=account_not_linked`);
      expect(await signedIn(owner)).toBe(false);
      expect((await rowsOf(email)).providers).toEqual(["credential"]);
    } finally {
      handler = kit.app;
      await strict.close();
    }
  });
});

describe("a provider that does not vouch for an address claims nothing (item 2)", () => {
  it("refuses email_not_verified before writing a user; the owner's own sign-up then works", async () => {
    const email = fresh("squatted");
    const squatter = new Browser();
    expect((await providerSignIn(squatter, email, false)).href).toBe(`${ERROR_CALLBACK}?error=email_not_verified`);
    expect(await signedIn(squatter)).toBe(false);
    expect(await kit.db.prisma.user.count({ where: { email } })).toBe(0);
    const owner = await post(new Browser(), "/sign-up/email", { email, password: "the owner's password", name: "Owner" });
    expect(owner.status).toBe(200);
  });

  it("refuses it for an existing address too, with the same code (nothing tells which addresses have accounts)", async () => {
    const email = fresh("existing");
    expect((await post(new Browser(), "/sign-up/email", { email, password: "the owner's password", name: "Owner" })).status).toBe(200);
    const squatter = new Browser();
    expect((await providerSignIn(squatter, email, false)).href).toBe(`${ERROR_CALLBACK}?error=email_not_verified`);
    expect((await rowsOf(email)).providers).toEqual(["credential"]);
  });
});

describe("a verification link proves the mailbox (item 1)", () => {
  /** The sign-up's verification link, as mailed. */
  const verificationLink = async (email: string) => linkOf(await kit.mailTo(email, "Verify"));

  it("a GET without the account's session changes nothing and shows the one-click page", async () => {
    const email = fresh("prefetched");
    const squatter = await squat(email);
    const before = await rowsOf(email);
    const page = await new Browser().request(await verificationLink(email));
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    const csp = page.headers.get("content-security-policy") ?? "";
    expect(csp).toContain(`form-action 'self' ${ORIGIN}`);
    expect(csp).toMatch(/script-src 'sha256-[A-Za-z0-9+/=]+'/);
    expect(page.headers.get("referrer-policy")).toBe("same-origin");
    const html = await page.text();
    expect(html).toContain('<form id="confirm" method="post" action="?token=');
    expect(html).not.toContain('name="password"');
    expect(await rowsOf(email)).toEqual(before);
    expect(await signedIn(squatter)).toBe(true);
  });

  it("the click without a session ends the squatter's password, sessions and links, then leads to a new password", async () => {
    const email = fresh("clicked");
    const squatter = await squat(email);
    const link = new URL(await verificationLink(email));
    const owner = new Browser();
    const page = await (await owner.request(link)).text();
    const action = new URL((/action="([^"]+)"/.exec(page)?.[1] ?? "").replaceAll("&amp;", "&"), link);
    // What a browser sends for the form: an empty body, Origin of the page (referrer policy same-origin).
    const res = await owner.request(action, { method: "POST", headers: { origin: new URL(baseUrl).origin, "content-length": "0" } });
    expect(res.status).toBe(303);
    const next = new URL(res.headers.get("location") ?? "");
    expect(`${next.origin}${next.pathname}`).toBe(`${ORIGIN}/reset-password`);
    const after = await rowsOf(email);
    expect(after).toMatchObject({ providers: [], sessions: 0, links: 1 });
    expect(after.user.emailVerified).toBe(true);
    expect(await signedIn(squatter)).toBe(false);
    expect((await post(new Browser(), "/sign-in/email", { email, password: SQUATTER_PASSWORD })).status).toBe(401);

    const token = next.searchParams.get("token") ?? "";
    expect((await post(owner, "/reset-password", { token, newPassword: "the owner's own password" })).status).toBe(200);
    expect((await post(new Browser(), "/sign-in/email", { email, password: "the owner's own password" })).status).toBe(200);
    // The link is spent.
    expect((await owner.request(action, { method: "POST", headers: { origin: new URL(baseUrl).origin } })).headers.get("location")).toMatch(
      /error=INVALID_TOKEN$/,
    );
  });

  it("opened in the creator's signed-in browser, it keeps the password and that session and ends the others", async () => {
    const email = fresh("creator");
    const creator = new Browser();
    expect((await post(creator, "/sign-up/email", { email, password: SQUATTER_PASSWORD, name: "Creator" })).status).toBe(200);
    const elsewhere = new Browser();
    expect((await post(elsewhere, "/sign-in/email", { email, password: SQUATTER_PASSWORD })).status).toBe(200);
    const res = await creator.request(await verificationLink(email));
    expect(res.status).toBe(302);
    expect(await signedIn(creator)).toBe(true);
    expect(await signedIn(elsewhere)).toBe(false);
    const after = await rowsOf(email);
    expect(after).toMatchObject({ providers: ["credential"], sessions: 1 });
    expect(after.user.emailVerified).toBe(true);
    expect((await post(new Browser(), "/sign-in/email", { email, password: SQUATTER_PASSWORD })).status).toBe(200);
  });

  it("with the account's password typed on the page it keeps the password; a wrong one leaves the link unused", async () => {
    const email = fresh("typed");
    expect((await post(new Browser(), "/sign-up/email", { email, password: SQUATTER_PASSWORD, name: "Typist" })).status).toBe(200);
    const link = new URL(await verificationLink(email));
    const token = link.searchParams.get("token") ?? "";
    const callbackURL = link.searchParams.get("callbackURL") ?? "";
    const clicker = new Browser();
    const wrong = await post(clicker, "/verify-email", { token, callbackURL, password: "not the password" });
    expect(wrong).toMatchObject({ status: 400, body: { code: "invalid_password" } });
    const right = await post(clicker, "/verify-email", { token, callbackURL, password: SQUATTER_PASSWORD });
    expect(right).toMatchObject({ status: 200, body: { status: true, redirectTo: callbackURL, user: { email, emailVerified: true } } });
    expect((await rowsOf(email)).providers).toEqual(["credential"]);
    expect((await post(new Browser(), "/sign-in/email", { email, password: SQUATTER_PASSWORD })).status).toBe(200);
  });
});
