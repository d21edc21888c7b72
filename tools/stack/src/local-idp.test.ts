import { randomBytes } from "node:crypto";
import { SET_AUTH_JWT_HEADER } from "@app/contracts";
import { createTestDatabase, type TestDatabase } from "@app/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchStack, type RunningStack } from "./launch.js";
import { identityIdpEnv, type LocalIdp, wantsLocalIdp } from "./local-idp.js";

let database: TestDatabase;
let stack: RunningStack;
const lines: string[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  stack = await launchStack({
    databaseUrl: database.url,
    port: 0,
    authSecret: randomBytes(32).toString("base64url"),
    dataEncryptionKey: randomBytes(32).toString("base64url"),
    env: { LOG_LEVEL: "warn", UPLOAD_DIR: `/tmp/stack-idp-uploads-${process.pid}` },
    localIdp: { port: 0 },
    onLine: (name, line) => lines.push(`${name} ${line}`),
  });
}, 120_000);
afterAll(async () => {
  await stack?.stop();
  await database?.drop();
});

/**
 * A browser without a window: one cookie jar per host and port, redirects followed by hand. The
 * test keeps only each cookie's `name=value` (the first segment, as stack.test.ts does) and drops
 * the ones a server expires.
 */
const jar = new Map<string, Map<string, string>>();
async function request(url: string | URL, init: RequestInit = {}): Promise<Response> {
  const target = new URL(url);
  const cookies = jar.get(target.host) ?? new Map<string, string>();
  jar.set(target.host, cookies);
  const headers = new Headers(init.headers);
  if (cookies.size) headers.set("cookie", [...cookies].map(([k, v]) => `${k}=${v}`).join("; "));
  const res = await fetch(target, { ...init, headers, redirect: "manual" });
  for (const header of res.headers.getSetCookie()) {
    const [pair = ""] = header.split(";");
    const at = pair.indexOf("=");
    const [name, value] = [pair.slice(0, at).trim(), pair.slice(at + 1).trim()];
    if (!value || /expires=Thu, 01 Jan 1970/i.test(header) || /max-age=0\b/i.test(header)) cookies.delete(name);
    else cookies.set(name, value);
  }
  return res;
}
async function follow(url: string | URL, stop: (next: URL) => boolean): Promise<URL> {
  let current = new URL(url);
  for (let hop = 0; hop < 20; hop++) {
    const res = await request(current);
    const location = res.headers.get("location");
    if (res.status < 300 || res.status >= 400 || !location)
      throw new Error(`no redirect from ${current.href}: ${res.status} ${await res.text()}`);
    await res.body?.cancel();
    const next = new URL(location, current);
    if (stop(next)) return next;
    current = next;
  }
  throw new Error("too many redirects");
}

describe("the local OpenID Provider of pnpm start (LOCAL_IDP=true)", () => {
  it("runs only when asked for, never in production, and appends `local` to the operator's providers", () => {
    expect(wantsLocalIdp({})).toBe(false);
    expect(wantsLocalIdp({ LOCAL_IDP: "true" })).toBe(true);
    expect(wantsLocalIdp({ LOCAL_IDP: "true", NODE_ENV: "production" })).toBe(false);
    const idp: LocalIdp = { issuer: "http://127.0.0.1:1", clientId: "c", clientSecret: "s", close: async () => undefined };
    expect(identityIdpEnv({ OIDC_PROVIDERS: "google, local" }, idp)).toMatchObject({
      OIDC_PROVIDERS: "google,local",
      OIDC_LOCAL_NAME: "Local IdP",
    });
    expect(identityIdpEnv({}, idp).OIDC_PROVIDERS).toBe("local");
  });

  it("is listed by identity, and its login form ends in a session that get-session turns into a JWT", async () => {
    const idp = stack.localIdp;
    expect(idp?.issuer).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(lines.some((l) => l.startsWith("idp local OpenID Provider: http://127.0.0.1:") && l.includes("ada@example.com"))).toBe(true);
    const providers = (await (await fetch(`${stack.baseUrl}/api/auth/providers`)).json()) as { id: string; name: string }[];
    expect(providers).toContainEqual({ id: "local", name: "Local IdP" });

    const start = await request(`${stack.baseUrl}/api/auth/sign-in/social`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ provider: "local", callbackURL: `${stack.baseUrl}/?signedIn=local` }),
    });
    expect(start.status).toBe(200);
    const { url } = (await start.json()) as { url: string };
    expect(url.startsWith(`${idp?.issuer}/`)).toBe(true);

    // The provider's own development login form: any of the demo accounts, any password.
    const interaction = await follow(url, (next) => next.pathname.startsWith("/interaction/"));
    const form = await request(interaction);
    const html = await form.text();
    expect(html).toContain('name="login"');
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1] ?? "";
    const submitted = await request(new URL(action, interaction), {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ prompt: "login", login: "ada@example.com", password: "anything" }),
    });
    expect(submitted.status).toBe(303);
    const back = await follow(
      new URL(submitted.headers.get("location") ?? "", interaction),
      (next) => next.origin === stack.baseUrl && !next.pathname.startsWith("/api/auth/callback/"),
    );
    expect(back.searchParams.get("signedIn")).toBe("local");
    expect(back.searchParams.get("error")).toBeNull();

    const cookies = jar.get(new URL(stack.baseUrl).host) ?? new Map<string, string>();
    const session = await fetch(`${stack.baseUrl}/api/auth/get-session`, {
      method: "POST",
      headers: { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join("; ") },
    });
    expect(session.status).toBe(200);
    expect(session.headers.get(SET_AUTH_JWT_HEADER)).toBeTruthy();
    expect(((await session.json()) as { user: { email: string; emailVerified: boolean } }).user).toMatchObject({
      email: "ada@example.com",
      emailVerified: true,
    });
    const me = await fetch(`${stack.baseUrl}/api/me`, { headers: { authorization: `Bearer ${session.headers.get(SET_AUTH_JWT_HEADER)}` } });
    expect(me.status).toBe(200);
  }, 60_000);
});
