import { createAuthClient } from "better-auth/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { identityKit, type Kit, ORIGIN, signUp } from "./kit.js";
import { Browser, CLIENT, providerStack, type TestProvider } from "./oidc-kit.js";

let baseUrl: string;
let provider: TestProvider;
let kit: Kit;
let stop: (() => Promise<void>) | undefined;

beforeAll(async () => {
  const gone = {
    OIDC_PROVIDERS: "local,gone",
    // Nothing listens on port 1: discovery fails.
    OIDC_GONE_ISSUER: "http://127.0.0.1:1",
    OIDC_GONE_CLIENT_ID: CLIENT.clientId,
    OIDC_GONE_CLIENT_SECRET: CLIENT.clientSecret,
  };
  ({ baseUrl, provider, kit, close: stop } = await providerStack((env) => identityKit({ env: { ...env, ...gone } })));
});
afterAll(() => stop?.());

async function post(browser: Browser, path: string, body: unknown) {
  const res = await browser.request(`${baseUrl}/api/auth${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: ORIGIN },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** Signs in through the provider as `email` and returns the browser holding the session. */
async function providerSignIn(email: string, sub: string): Promise<Browser> {
  const browser = new Browser();
  provider.loginAs({ sub, email, email_verified: true, name: "Linked" });
  const { body } = await post(browser, "/sign-in/social", { provider: "local", callbackURL: `${ORIGIN}/` });
  const landed = await browser.follow(String(body.url), (u) => u.origin === ORIGIN);
  expect(landed.searchParams.get("error")).toBeNull();
  return browser;
}

async function listAccounts(browser: Browser) {
  const res = await browser.request(`${baseUrl}/api/auth/list-accounts`);
  return { status: res.status, body: (await res.json()) as Array<{ providerId: string; accountId: string }> };
}

describe("sign-in/social input", () => {
  it("answers 404 for an unknown provider, 403 for a foreign callback, 400 for a bad body", async () => {
    const browser = new Browser();
    expect(await post(browser, "/sign-in/social", { provider: "nope" })).toMatchObject({ status: 404, body: { code: "not_found" } });
    for (const field of ["callbackURL", "errorCallbackURL", "newUserCallbackURL"]) {
      const res = await post(browser, "/sign-in/social", { provider: "local", [field]: "https://evil.example/steal" });
      expect(res).toMatchObject({ status: 403, body: { code: "forbidden" } });
    }
    expect((await post(browser, "/sign-in/social", { callbackURL: "/" })).status).toBe(400);
    expect(browser.cookie(`${baseUrl}/api/auth/callback/local`, "identity.oauth_flow")).toBeUndefined();
  });

  it("answers 503 when the provider cannot be discovered, and sets no flow cookie", async () => {
    const browser = new Browser();
    expect(await post(browser, "/sign-in/social", { provider: "gone" })).toMatchObject({
      status: 503,
      body: { code: "service_unavailable" },
    });
    expect(browser.cookie(`${baseUrl}/api/auth/callback/gone`, "identity.oauth_flow")).toBeUndefined();
  });

  it("answers redirect: false when the client asks to redirect by itself", async () => {
    const res = await post(new Browser(), "/sign-in/social", { provider: "local", disableRedirect: true });
    expect(res).toMatchObject({ status: 200, body: { redirect: false } });
    expect(String(res.body.url)).toMatch(new RegExp(`^${provider.issuer}/auth\\?`));
  });
});

describe("list-accounts and unlink-account", () => {
  it("need a session", async () => {
    expect((await listAccounts(new Browser())).status).toBe(401);
    expect((await post(new Browser(), "/unlink-account", { providerId: "local" })).status).toBe(401);
  });

  it("list the ways to sign in and unlink any but the last", async () => {
    const { user } = await signUp(kit.app);
    // A provider links only to an account whose address was proven (test/pre-account-takeover.test.ts).
    await kit.db.prisma.user.update({ where: { id: user.id }, data: { emailVerified: true } });
    const browser = await providerSignIn(user.email, `sub-linked-${Date.now()}`);
    const listed = await listAccounts(browser);
    expect(listed.status).toBe(200);
    expect(listed.body.map((a) => a.providerId).sort()).toEqual(["credential", "local"]);
    expect(JSON.stringify(listed.body)).not.toContain("password");

    expect(await post(browser, "/unlink-account", { providerId: "nope" })).toMatchObject({ status: 404 });
    expect(await post(browser, "/unlink-account", {})).toMatchObject({ status: 400 });
    const local = listed.body.find((a) => a.providerId === "local");
    expect(await post(browser, "/unlink-account", { providerId: "local", accountId: "someone-else" })).toMatchObject({ status: 404 });
    expect(await post(browser, "/unlink-account", { accountId: (local as { id?: string })?.id })).toMatchObject({
      status: 200,
      body: { status: true },
    });
    expect((await listAccounts(browser)).body.map((a) => a.providerId)).toEqual(["credential"]);
    expect(await post(browser, "/unlink-account", { providerId: "credential" })).toMatchObject({
      status: 400,
      body: { code: "bad_request" },
    });
  });

  it("never unlink a provider-only user's only account", async () => {
    const browser = await providerSignIn(`only-${Date.now()}@example.com`, `sub-only-${Date.now()}`);
    expect(await post(browser, "/unlink-account", { providerId: "local" })).toMatchObject({ status: 400 });
    expect((await listAccounts(browser)).body).toHaveLength(1);
  });
});

describe("better-auth's client", () => {
  it("signs in with signIn.social, then getSession and listAccounts work", async () => {
    const browser = new Browser();
    const customFetchImpl = (input: string | URL | Request, init?: RequestInit) =>
      browser.request(input instanceof Request ? input.url : input, {
        ...init,
        headers: { ...Object.fromEntries(new Headers(init?.headers)), origin: ORIGIN },
      });
    const client = createAuthClient({ baseURL: baseUrl, fetchOptions: { customFetchImpl } });
    const email = `client-${Date.now()}@example.com`;
    provider.loginAs({ sub: `sub-client-${Date.now()}`, email, email_verified: true, name: "Client" });
    const started = await client.signIn.social({ provider: "local", callbackURL: `${ORIGIN}/home`, disableRedirect: true });
    expect(started.error).toBeNull();
    const landed = await browser.follow(String(started.data?.url), (u) => u.origin === ORIGIN);
    expect(landed.href).toBe(`${ORIGIN}/home`);
    const session = await client.getSession();
    expect(session.data?.user.email).toBe(email);
    const accounts = await client.listAccounts();
    expect(accounts.data?.map((a) => a.providerId)).toEqual(["local"]);
    const unlinked = await client.unlinkAccount({ accountId: accounts.data?.[0]?.id ?? "" });
    expect(unlinked.error?.status).toBe(400);
  });
});
