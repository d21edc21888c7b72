import { createAuthClient } from "better-auth/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { identityKit, type Kit, ORIGIN } from "./kit.js";
import { Browser, providerStack, type TestProvider } from "./oidc-kit.js";

// POST /api/auth/link-social with better-auth's own client (`linkSocial`): a signed-in user whose
// address is verified adds a provider identity (the way forward after account_not_linked).
const PASSWORD = "correct horse battery";
let baseUrl: string;
let provider: TestProvider;
let kit: Kit;
let stop: (() => Promise<void>) | undefined;
let n = 0;

beforeAll(async () => {
  ({ baseUrl, provider, kit, close: stop } = await providerStack((env) => identityKit({ env })));
});
afterAll(() => stop?.());

/** better-auth's client in one cookie-keeping browser. */
function clientIn(browser: Browser) {
  const customFetchImpl = (input: string | URL | Request, init?: RequestInit) =>
    browser.request(input instanceof Request ? input.url : input, {
      ...init,
      headers: { ...Object.fromEntries(new Headers(init?.headers)), origin: ORIGIN },
    });
  return createAuthClient({ baseURL: baseUrl, fetchOptions: { customFetchImpl } });
}

/** A signed-up user; `verified` marks the address proven as a mailed link would have. */
async function member(verified: boolean) {
  n += 1;
  const email = `member-${n}-${Date.now()}@example.com`;
  const browser = new Browser();
  const client = clientIn(browser);
  expect((await client.signUp.email({ email, password: PASSWORD, name: "Member" })).error).toBeNull();
  if (verified) await kit.db.prisma.user.update({ where: { email }, data: { emailVerified: true } });
  return { email, browser, client };
}

/** Starts linkSocial as `sub` with `email`, follows the provider, and returns where the browser landed. */
async function link(m: Awaited<ReturnType<typeof member>>, sub: string, email: string, emailVerified = true): Promise<URL> {
  provider.loginAs({ sub, email, email_verified: emailVerified, name: "Linked" });
  // A new login at the provider each time (its own session would answer for the previous account).
  m.browser.jar.delete(new URL(provider.issuer).host);
  const started = await m.client.linkSocial({ provider: "local", callbackURL: `${ORIGIN}/account`, disableRedirect: true });
  expect(started.error).toBeNull();
  expect(started.data?.redirect).toBe(false);
  return m.browser.follow(String(started.data?.url), (u) => u.origin === ORIGIN);
}

describe("link-social", () => {
  it("links a provider identity to the signed-in, verified user and keeps the same session", async () => {
    const m = await member(true);
    const before = m.browser.cookie(baseUrl, "identity.session_token");
    const landed = await link(m, `sub-link-${n}`, m.email);
    expect(landed.href).toBe(`${ORIGIN}/account`);
    expect(m.browser.cookie(baseUrl, "identity.session_token")).toBe(before);
    const accounts = await m.client.listAccounts();
    expect(accounts.data?.map((a) => a.providerId).sort()).toEqual(["credential", "local"]);
    // The identity now signs in to this user.
    provider.loginAs({ sub: `sub-link-${n}`, email: m.email, email_verified: true, name: "Linked" });
    const other = new Browser();
    const started = await clientIn(other).signIn.social({ provider: "local", callbackURL: `${ORIGIN}/home`, disableRedirect: true });
    expect((await other.follow(String(started.data?.url), (u) => u.origin === ORIGIN)).href).toBe(`${ORIGIN}/home`);
    expect((await clientIn(other).getSession()).data?.user.email).toBe(m.email);
  });

  it("needs a session and a verified address", async () => {
    const anonymous = await clientIn(new Browser()).linkSocial({ provider: "local", disableRedirect: true });
    expect(anonymous.error?.status).toBe(401);
    const m = await member(false);
    const refused = await m.client.linkSocial({ provider: "local", disableRedirect: true });
    expect(refused.error).toMatchObject({ status: 403, code: "email_not_verified" });
    const idToken = await m.client.linkSocial({ provider: "local", idToken: { token: "x" } });
    expect(idToken.error?.status).toBe(400);
  });

  it("refuses an identity whose address the provider does not vouch for, or that is another address", async () => {
    const m = await member(true);
    expect((await link(m, `sub-unverified-${n}`, m.email, false)).searchParams.get("error")).toBe("email_not_verified");
    expect((await link(m, `sub-other-${n}`, `someone-else-${n}@example.com`)).searchParams.get("error")).toBe("email_mismatch");
    // A full-width spelling folds to this address, but the provider vouched for another mailbox.
    const wide = m.email.replace("member", "\uff4d\uff45\uff4d\uff42\uff45\uff52");
    expect((await link(m, `sub-wide-${n}`, wide)).searchParams.get("error")).toBe("email_not_verified");
    expect(await kit.db.prisma.account.count({ where: { user: { email: m.email } } })).toBe(1);
  });

  it("refuses an identity already linked to another user, and a flow whose session ended", async () => {
    const first = await member(true);
    await link(first, `sub-taken-${n}`, first.email);
    const second = await member(true);
    expect((await link(second, `sub-taken-${n - 1}`, second.email)).searchParams.get("error")).toBe("account_already_linked");

    const third = await member(true);
    provider.loginAs({ sub: `sub-late-${n}`, email: third.email, email_verified: true, name: "Late" });
    const started = await third.client.linkSocial({ provider: "local", callbackURL: `${ORIGIN}/account`, disableRedirect: true });
    await kit.db.prisma.session.deleteMany({ where: { user: { email: third.email } } });
    const landed = await third.browser.follow(String(started.data?.url), (u) => u.origin === ORIGIN);
    expect(landed.searchParams.get("error")).toBe("session_expired");
    expect(await kit.db.prisma.account.count({ where: { user: { email: third.email } } })).toBe(1);
  });
});
