import { randomBytes } from "node:crypto";
import { createTestDatabase, type TestDatabase } from "@app/db/testing";
import { type MailCatcher, startMailCatcher } from "@app/mailer/catcher";
import { launchStack, type RunningStack } from "@app/stack";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiError, type AppClient, createClient, memoryStorage } from "../src/index.js";
import { cookieFetch, signUpSignedIn } from "./helpers.js";

// The SDK's linked sign-in methods (listAccounts, linkSocial, unlinkAccount) against a real
// identity with the stack's local OpenID Provider (tools/stack/src/local-idp.ts) and real SMTP to
// a catcher: the address is verified with its mailed link, and the provider's own login form is
// driven with fetch. The same flow in Chromium: tools/e2e/src/link-provider.test.ts.
/** The web app's origin (CORS_ORIGINS), where identity sends the browser back; nothing needs to answer there. */
const WEB = "http://localhost:5173";
let catcher: MailCatcher;
let database: TestDatabase;
let stack: RunningStack;
beforeAll(async () => {
  [catcher, database] = await Promise.all([startMailCatcher({ port: 0 }), createTestDatabase()]);
  stack = await launchStack({
    databaseUrl: database.url,
    port: 0,
    authSecret: randomBytes(32).toString("base64url"),
    dataEncryptionKey: randomBytes(32).toString("base64url"),
    env: { LOG_LEVEL: "warn", UPLOAD_DIR: `/tmp/client-linked-${process.pid}`, SMTP_URL: catcher.url, CORS_ORIGINS: WEB },
    localIdp: { port: 0 },
    onLine: () => undefined,
  });
}, 120_000);
afterAll(async () => {
  await stack?.stop();
  await database?.drop();
  await catcher?.close();
});

const PASSWORD = "correct horse battery";
/** A demo account of the local provider (tools/stack/src/local-idp.ts), which vouches for its address. */
const ADA = "ada@example.com";

/** A client with its own cookie jar (a browser): its `fetch` carries identity's cookies with `credentials: "include"`. */
function browser() {
  const jar = cookieFetch();
  return { client: createClient({ baseUrl: stack.baseUrl, storage: memoryStorage(), fetch: jar.fetch }), jar };
}

/** Signs up with `email` and opens the mailed verification link where that user is signed in. */
async function verifiedUser(email: string): Promise<ReturnType<typeof browser>> {
  const user = browser();
  await signUpSignedIn(user.client, { email, password: PASSWORD, name: "Linker", callbackURL: `${WEB}/?verified=1` });
  const mail = await catcher.waitFor((m) => m.to.includes(email) && m.links.some((l) => l.includes("/verify-email")), 15_000);
  const link = mail.links.find((l) => l.includes("/verify-email")) ?? "";
  const opened = await user.jar.fetch(link, { credentials: "include", redirect: "manual" });
  expect(opened.status).toBe(302);
  expect((await user.client.auth.currentSession())?.user.emailVerified).toBe(true);
  return user;
}

/** The provider's side in one cookie jar of its own: redirects followed by hand. */
const idpCookies = new Map<string, string>();
async function atProvider(url: URL, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  if (idpCookies.size) headers.set("cookie", [...idpCookies].map(([k, v]) => `${k}=${v}`).join("; "));
  const res = await fetch(url, { ...init, headers, redirect: "manual" });
  for (const line of res.headers.getSetCookie()) {
    const [pair = ""] = line.split(";");
    const at = pair.indexOf("=");
    const [name, value] = [pair.slice(0, at).trim(), pair.slice(at + 1).trim()];
    if (!value || /expires=Thu, 01 Jan 1970/i.test(line)) idpCookies.delete(name);
    else idpCookies.set(name, value);
  }
  return res;
}

/**
 * Signs in at the provider as `login` (its development form, any password; skipped while the
 * provider's own session lasts) and returns identity's callback URL, not yet opened.
 */
async function providerAnswer(authorizationUrl: string, login: string): Promise<URL> {
  let current = new URL(authorizationUrl);
  for (let hop = 0; hop < 20; hop++) {
    if (current.origin === stack.baseUrl) return current;
    let res = await atProvider(current);
    if (current.pathname.startsWith("/interaction/") && res.status === 200) {
      const action = /<form[^>]*action="([^"]+)"/.exec(await res.text())?.[1] ?? "";
      res = await atProvider(new URL(action, current), {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ prompt: "login", login, password: "any password" }),
      });
    }
    const location = res.headers.get("location");
    await res.body?.cancel();
    if (!location) throw new Error(`the provider answered ${res.status} at ${current.href} without a redirect`);
    current = new URL(location, current);
  }
  throw new Error("too many redirects at the provider");
}

/** Links the local provider to `user` as `login`; answers where identity sent the browser back. */
async function link(user: ReturnType<typeof browser>, login: string): Promise<URL> {
  const url = await user.client.auth.linkSocial({
    provider: "local",
    callbackURL: `${WEB}/?linked=local`,
    errorCallbackURL: `${WEB}/?authError=1`,
  });
  expect(new URL(url).origin).toBe(stack.localIdp?.issuer);
  // The callback carries the browser's cookies: the flow cookie and the session that asked.
  const callback = await user.jar.fetch((await providerAnswer(url, login)).href, { credentials: "include", redirect: "manual" });
  expect(callback.status).toBe(302);
  return new URL(callback.headers.get("location") ?? "", stack.baseUrl);
}

const providersOf = async (client: AppClient) => (await client.auth.listAccounts()).map((a) => a.providerId).sort();

describe("auth.listAccounts(), auth.linkSocial() and auth.unlinkAccount()", () => {
  it("link a provider to a verified password user, who then signs in with it; unlink removes it but never the last way", async () => {
    const unverified = browser();
    await signUpSignedIn(unverified.client, { email: ADA, password: PASSWORD, name: "Ada", callbackURL: `${WEB}/?verified=1` });
    expect(await unverified.client.auth.listAccounts()).toEqual([
      expect.objectContaining({ providerId: "credential", accountId: ADA, scopes: [] }),
    ]);
    // A provider links only to an address its mailbox proved.
    const refused = await unverified.client.auth.linkSocial({ provider: "local", callbackURL: `${WEB}/` }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ApiError);
    expect(refused).toMatchObject({ status: 403, code: "email_not_verified" });

    const mail = await catcher.waitFor((m) => m.to.includes(ADA) && m.links.some((l) => l.includes("/verify-email")), 15_000);
    const opened = await unverified.jar.fetch(mail.links.find((l) => l.includes("/verify-email")) ?? "", {
      credentials: "include",
      redirect: "manual",
    });
    expect(opened.status).toBe(302);
    const user = unverified;
    const before = await user.client.auth.currentSession();
    expect(before?.user.emailVerified).toBe(true);

    const back = await link(user, ADA);
    expect(back.searchParams.get("linked")).toBe("local");
    expect(back.searchParams.get("error")).toBeNull();
    expect(await providersOf(user.client)).toEqual(["credential", "local"]);
    // Linking opens no new session: the one that asked goes on.
    expect((await user.client.auth.currentSession())?.session.id).toBe(before?.session.id);

    // Another browser signs in with the provider alone, to the same user.
    const elsewhere = browser();
    const signIn = await elsewhere.client.auth.signInSocial({ provider: "local", callbackURL: `${WEB}/?signedIn=local` });
    const landed = await elsewhere.jar.fetch((await providerAnswer(signIn, ADA)).href, { credentials: "include", redirect: "manual" });
    expect(new URL(landed.headers.get("location") ?? "").searchParams.get("signedIn")).toBe("local");
    expect((await elsewhere.client.auth.getSession())?.user.id).toBe(before?.user.id);

    const local = (await user.client.auth.listAccounts()).find((a) => a.providerId === "local");
    expect(await user.client.auth.unlinkAccount({ accountId: local?.id ?? "" })).toEqual({ status: true });
    expect(await providersOf(user.client)).toEqual(["credential"]);
    const password = (await user.client.auth.listAccounts())[0];
    await expect(user.client.auth.unlinkAccount({ accountId: password?.id ?? "" })).rejects.toMatchObject({
      status: 400,
      code: "bad_request",
    });
    await expect(user.client.auth.unlinkAccount({ accountId: local?.id ?? "" })).rejects.toMatchObject({ status: 404, code: "not_found" });
  }, 60_000);

  it("comes back with email_mismatch when the provider's account has another address, and links nothing", async () => {
    const user = await verifiedUser(`carol-${Date.now()}@example.com`);
    const back = await link(user, ADA);
    expect(back.searchParams.get("authError")).toBe("1");
    expect(back.searchParams.get("error")).toBe("email_mismatch");
    expect(await providersOf(user.client)).toEqual(["credential"]);
  }, 60_000);

  it("answers 401 without a session, and drops the stored JWT of a session that ended", async () => {
    const user = await verifiedUser(`dan-${Date.now()}@example.com`);
    expect(user.client.auth.token()).not.toBeNull();
    await user.jar.fetch(`${stack.baseUrl}/api/auth/sign-out`, { method: "POST", credentials: "include" });
    await expect(user.client.auth.linkSocial({ provider: "local", callbackURL: `${WEB}/` })).rejects.toMatchObject({
      status: 401,
      code: "unauthorized",
    });
    expect(user.client.auth.token()).toBeNull();
    await expect(browser().client.auth.listAccounts()).rejects.toMatchObject({ status: 401, code: "unauthorized" });
  }, 60_000);
});
