import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createRemoteJWKSet, jwtVerify } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { identityKit, type Kit, ORIGIN, signUp } from "./kit.js";
import { Browser, startProvider, type TestAccount, type TestProvider } from "./oidc-kit.js";

const CLIENT = { clientId: "identity-test", clientSecret: "identity-test-secret-0123456789" };
const CALLBACK = `${ORIGIN}/dashboard`;
const ERROR_CALLBACK = `${ORIGIN}/sign-in`;

let server: Server;
let baseUrl: string;
let provider: TestProvider;
/** Another issuer with the same client registration (an ID token from it is not "local"'s). */
let other: TestProvider;
/** A provider stopped between authorization and callback. */
let flaky: TestProvider;
let kit: Awaited<ReturnType<typeof identityKit>>;
let env: Record<string, string>;
/** The app the listening server hands requests to (a test may swap in another configuration). */
let handler: Kit["app"];
let n = 0;

function account(overrides: Partial<TestAccount> = {}): TestAccount {
  n += 1;
  return {
    sub: `sub-${n}-${Date.now()}`,
    email: `oidc${n}-${Date.now()}@example.com`,
    email_verified: true,
    name: `OIDC User ${n}`,
    ...overrides,
  };
}

/** POST /api/auth/sign-in/social as the web app's button does; returns the authorization URL. */
async function startSignIn(browser: Browser, body: Record<string, unknown> = {}): Promise<URL> {
  const res = await browser.request(`${baseUrl}/api/auth/sign-in/social`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: ORIGIN },
    body: JSON.stringify({ provider: "local", callbackURL: CALLBACK, errorCallbackURL: ERROR_CALLBACK, ...body }),
  });
  expect(res.status).toBe(200);
  const json = (await res.json()) as { url: string; redirect: boolean };
  expect(json.redirect).toBe(true);
  return new URL(json.url);
}

const isCallback = (u: URL) => u.href.startsWith(`${baseUrl}/api/auth/callback/`);
const refused = (code: string) => `${ERROR_CALLBACK}?error=${code}`;
const isWebApp = (u: URL) => u.origin === ORIGIN;

/** Calls identity's callback and returns where it sends the browser. */
async function callback(browser: Browser, url: URL): Promise<URL> {
  const res = await browser.request(url);
  expect(res.status).toBe(302);
  return new URL(res.headers.get("location") ?? "");
}

const sessionCookie = (browser: Browser) => browser.cookie(baseUrl, "identity.session_token");
const flowCookie = (browser: Browser) => browser.cookie(`${baseUrl}/api/auth/callback/local`, "identity.oauth_flow");

async function rows(email: string) {
  const prisma = kit.db.prisma;
  const user = await prisma.user.findUnique({ where: { email } });
  return {
    user,
    accounts: user ? await prisma.account.count({ where: { userId: user.id } }) : 0,
    sessions: user ? await prisma.session.count({ where: { userId: user.id } }) : 0,
  };
}

beforeAll(async () => {
  server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  provider = await startProvider({ ...CLIENT, redirectUri: `${baseUrl}/api/auth/callback/local` }, "another-app");
  other = await startProvider({ ...CLIENT, redirectUri: `${baseUrl}/api/auth/callback/local` });
  flaky = await startProvider({ ...CLIENT, redirectUri: `${baseUrl}/api/auth/callback/flaky` });
  env = {
    BASE_URL: baseUrl,
    OIDC_PROVIDERS: "local,flaky",
    OIDC_FLAKY_ISSUER: flaky.issuer,
    OIDC_FLAKY_CLIENT_ID: CLIENT.clientId,
    OIDC_FLAKY_CLIENT_SECRET: CLIENT.clientSecret,
    OIDC_LOCAL_ISSUER: provider.issuer,
    OIDC_LOCAL_CLIENT_ID: CLIENT.clientId,
    OIDC_LOCAL_CLIENT_SECRET: CLIENT.clientSecret,
    OIDC_LOCAL_NAME: "Local IdP",
  };
  kit = await identityKit({ env });
  handler = kit.app;
  server.on("request", (req, res) => handler(req, res));
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await provider.close();
  await other.close();
  await flaky.close();
  await kit.close();
});

describe("sign-in through a real OpenID Provider", () => {
  it("lists the configured providers for the buttons", async () => {
    const res = await fetch(`${baseUrl}/api/auth/providers`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual([
      { id: "local", name: "Local IdP" },
      { id: "flaky", name: "flaky" },
    ]);
  });

  it("signs a new user in: session cookie, get-session's set-auth-jwt verifies against the JWKS", async () => {
    const browser = new Browser();
    const user = account();
    provider.loginAs(user);
    const authorize = await startSignIn(browser);
    expect(authorize.origin).toBe(new URL(provider.issuer).origin);
    expect(authorize.searchParams.get("code_challenge_method")).toBe("S256");
    expect(authorize.searchParams.get("nonce")).toBeTruthy();
    expect(authorize.searchParams.get("state")).toBeTruthy();
    expect(authorize.searchParams.get("redirect_uri")).toBe(`${baseUrl}/api/auth/callback/local`);
    expect(flowCookie(browser)).toBeTruthy();

    const landed = await browser.follow(authorize, isWebApp);
    expect(landed.href).toBe(CALLBACK);
    expect(sessionCookie(browser)).toBeTruthy();
    expect(flowCookie(browser)).toBeUndefined();

    const res = await browser.request(`${baseUrl}/api/auth/get-session`, { method: "POST", headers: { origin: ORIGIN } });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { user: { email: string; emailVerified: boolean; name: string } };
    expect(body.user).toMatchObject({ email: user.email, emailVerified: true, name: user.name });
    const jwt = res.headers.get("set-auth-jwt") ?? "";
    const { payload } = await jwtVerify(jwt, createRemoteJWKSet(new URL(`${baseUrl}/api/auth/jwks`)), {
      issuer: kit.config.issuer,
      audience: kit.config.audience,
    });
    expect(payload.email).toBe(user.email);

    const stored = await rows(user.email);
    expect(stored.accounts).toBe(1);
    const link = await kit.db.prisma.account.findFirst({ where: { userId: stored.user?.id ?? "" } });
    expect(link).toMatchObject({ providerId: "local", accountId: user.sub, passwordHash: null });

    // The same provider identity signs in again as the same user.
    const again = new Browser();
    provider.loginAs(user);
    expect((await again.follow(await startSignIn(again), isWebApp)).href).toBe(CALLBACK);
    expect((await rows(user.email)).sessions).toBe(2);
    expect(await kit.db.prisma.user.count({ where: { email: user.email } })).toBe(1);
  });
});

describe("refused callbacks write nothing", () => {
  it("refuses a state that is not this browser's (and a callback without the flow cookie)", async () => {
    const browser = new Browser();
    const user = account();
    provider.loginAs(user);
    const back = await browser.follow(await startSignIn(browser), isCallback);
    const forged = new URL(back);
    forged.searchParams.set("state", "attacker-state");
    expect((await callback(browser, forged)).href).toBe(refused("state_mismatch"));

    // A victim's browser that never started this flow holds no flow cookie.
    const victim = new Browser();
    const landed = await callback(victim, back);
    expect(landed.searchParams.get("error")).toBe("state_mismatch");
    expect(sessionCookie(victim)).toBeUndefined();
    expect((await rows(user.email)).user).toBeNull();
  });

  it("refuses a replayed code", async () => {
    const browser = new Browser();
    const user = account();
    provider.loginAs(user);
    const back = await browser.follow(await startSignIn(browser), isCallback);
    const replay = flowCookie(browser) ?? "";
    expect((await callback(browser, back)).href).toBe(CALLBACK);
    // The same code again, even with the flow cookie it was issued for: the provider refuses it.
    browser.setCookie(`${baseUrl}/api/auth/callback/local`, "identity.oauth_flow", replay);
    expect((await callback(browser, back)).href).toBe(refused("invalid_grant"));
    expect((await rows(user.email)).sessions).toBe(1);
    // Access lines redact the code and state (packages/http-kit/src/logger.ts); nothing else logs them.
    const logs = kit.logs.join("\n");
    for (const secret of [back.searchParams.get("code") ?? "", back.searchParams.get("state") ?? "", replay])
      expect(logs).not.toContain(secret);
  });

  it("passes the provider's refusal on (access_denied)", async () => {
    const browser = new Browser();
    provider.loginAs(account());
    const back = await browser.follow(await startSignIn(browser), isCallback);
    back.searchParams.delete("code");
    back.searchParams.set("error", "access_denied");
    expect((await callback(browser, back)).href).toBe(refused("access_denied"));
  });

  it("refuses an ID token whose nonce is not the one this browser sent", async () => {
    const browser = new Browser();
    const user = account();
    provider.loginAs(user);
    const authorize = await startSignIn(browser);
    authorize.searchParams.set("nonce", "another-nonce-another-nonce-0123456789");
    const back = await browser.follow(authorize, isCallback);
    expect((await callback(browser, back)).href).toBe(refused("invalid_response"));
    expect((await rows(user.email)).user).toBeNull();
  });

  it("refuses a response from another issuer (a second provider with the same client)", async () => {
    const browser = new Browser();
    const user = account();
    other.loginAs(user);
    const authorize = await startSignIn(browser);
    const elsewhere = new URL(authorize.pathname + authorize.search, other.issuer);
    const back = await browser.follow(elsewhere, isCallback);
    expect(back.searchParams.get("iss")).toBe(other.issuer);
    expect((await callback(browser, back)).href).toBe(refused("invalid_response"));
    expect((await rows(user.email)).user).toBeNull();
  });

  it("refuses a code issued to another client of the same provider (another audience)", async () => {
    const browser = new Browser();
    const user = account();
    provider.loginAs(user);
    const authorize = await startSignIn(browser);
    authorize.searchParams.set("client_id", "another-app");
    const back = await browser.follow(authorize, isCallback);
    expect(back.searchParams.get("code")).toBeTruthy();
    expect((await callback(browser, back)).href).toBe(refused("invalid_grant"));
    expect((await rows(user.email)).user).toBeNull();
  });

  it("links a provider email to an existing user only when both the provider and the user's own verification vouch for it", async () => {
    const { user: existing } = await signUp(kit.app);
    const browser = new Browser();
    provider.loginAs(account({ email: existing.email, email_verified: false }));
    expect((await browser.follow(await startSignIn(browser), isWebApp)).href).toBe(refused("email_not_verified"));
    expect(sessionCookie(browser)).toBeUndefined();

    // The provider vouches, but nobody proved the account's address (test/pre-account-takeover.test.ts).
    const unproven = new Browser();
    provider.loginAs(account({ email: existing.email, email_verified: true }));
    expect((await unproven.follow(await startSignIn(unproven), isWebApp)).href).toBe(refused("account_not_linked"));
    expect(sessionCookie(unproven)).toBeUndefined();
    expect(await kit.db.prisma.account.count({ where: { userId: existing.id } })).toBe(1);

    // Once the address is verified, the provider asserting it links it: the same user, one more account.
    await kit.db.prisma.user.update({ where: { id: existing.id }, data: { emailVerified: true } });
    const verified = new Browser();
    provider.loginAs(account({ email: existing.email, email_verified: true }));
    expect((await verified.follow(await startSignIn(verified), isWebApp)).href).toBe(CALLBACK);
    expect(await kit.db.prisma.account.count({ where: { userId: existing.id } })).toBe(2);
  });

  it("refuses a look-alike spelling of an address (full-width letters); the fully qualified domain is the same address", async () => {
    const { user: existing } = await signUp(kit.app);
    await kit.db.prisma.user.update({ where: { id: existing.id }, data: { emailVerified: true } });
    const [local, domain] = existing.email.split("@") as [string, string];
    const wide = [...local].map((c) => (/[a-z]/.test(c) ? String.fromCodePoint((c.codePointAt(0) as number) - 0x61 + 0xff41) : c)).join("");
    const lookAlike = new Browser();
    provider.loginAs(account({ email: `${wide}@${domain}`, email_verified: true }));
    expect((await lookAlike.follow(await startSignIn(lookAlike), isWebApp)).href).toBe(refused("email_not_verified"));
    expect(await kit.db.prisma.account.count({ where: { userId: existing.id } })).toBe(1);
    expect(await kit.db.prisma.user.count({ where: { email: { contains: wide } } })).toBe(0);

    // The fully qualified spelling of the domain is the same mailbox: it links to the account.
    const dotted = new Browser();
    provider.loginAs(account({ email: `${existing.email}.`, email_verified: true }));
    expect((await dotted.follow(await startSignIn(dotted), isWebApp)).href).toBe(CALLBACK);
    expect(await kit.db.prisma.account.count({ where: { userId: existing.id } })).toBe(2);
    expect(await kit.db.prisma.user.count({ where: { email: `${existing.email}.` } })).toBe(0);
  });

  it("with REQUIRE_EMAIL_VERIFICATION, refuses an unverified provider email before writing a user", async () => {
    const strict = await identityKit({ database: kit.database, env: { ...env, REQUIRE_EMAIL_VERIFICATION: "true" } });
    handler = strict.app;
    try {
      const browser = new Browser();
      const user = account({ email_verified: false });
      provider.loginAs(user);
      expect((await browser.follow(await startSignIn(browser), isWebApp)).href).toBe(refused("email_not_verified"));
      expect(await rows(user.email)).toEqual({ user: null, accounts: 0, sessions: 0 });
      const verified = new Browser();
      provider.loginAs(account());
      expect((await verified.follow(await startSignIn(verified), isWebApp)).href).toBe(CALLBACK);
    } finally {
      handler = kit.app;
      await strict.close();
    }
  });

  it("redirects with server_error when the database fails at the callback", async () => {
    const broken = await identityKit({ database: kit.database, env });
    handler = broken.app;
    try {
      const browser = new Browser();
      const user = account();
      provider.loginAs(user);
      const back = await browser.follow(await startSignIn(browser), isCallback);
      await broken.db.close();
      expect((await callback(browser, back)).href).toBe(refused("server_error"));
      expect(sessionCookie(browser)).toBeUndefined();
      expect((await rows(user.email)).user).toBeNull();
    } finally {
      handler = kit.app;
      await broken.close().catch(() => undefined);
    }
  });

  it("redirects with provider_unavailable when the provider is down at the callback, writing nothing", async () => {
    const browser = new Browser();
    const user = account();
    flaky.loginAs(user);
    const back = await browser.follow(await startSignIn(browser, { provider: "flaky" }), isCallback);
    await flaky.close();
    expect((await callback(browser, back)).href).toBe(refused("provider_unavailable"));
    expect(sessionCookie(browser)).toBeUndefined();
    expect(await rows(user.email)).toEqual({ user: null, accounts: 0, sessions: 0 });
    expect(await kit.db.prisma.account.count({ where: { providerId: "flaky" } })).toBe(0);
  });
});
