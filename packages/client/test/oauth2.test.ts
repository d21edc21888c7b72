import { createHash, randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AppClient, createClient, type FetchLike, memoryStorage, signedConsentQuery } from "../src/index.js";
import { cookieFetch, freshEmail, signUpSignedIn, startStack } from "./helpers.js";

// The consent page's calls and the user's authorized applications through the SDK, against a real
// identity acting as the OAuth 2.1 authorization server: a third-party client registers at the
// advertised registration endpoint, the user's browser (a cookie jar) follows the authorization
// request to the web app's consent page, and the SDK answers it as the page does.
/** The web app's origin (CORS_ORIGINS): identity sends the browser to its consent page; nothing answers there. */
const WEB = "http://localhost:5173";
/** The client's redirect URI: never fetched, the browser stops there and hands the URL to the client. */
const REDIRECT_URI = "http://127.0.0.1:9/callback";
const PASSWORD = "correct horse battery";
let env: Awaited<ReturnType<typeof startStack>>;
let metadata: { authorization_endpoint: string; token_endpoint: string; registration_endpoint: string };
beforeAll(async () => {
  env = await startStack({ CORS_ORIGINS: WEB });
  const res = await fetch(`${env.stack.baseUrl}/.well-known/openid-configuration`);
  metadata = (await res.json()) as typeof metadata;
});
afterAll(async () => {
  await env?.stop();
});

/** A signed-in user in a browser of their own: the SDK and the browser's cookie jar. */
async function user(): Promise<{ client: AppClient; fetch: FetchLike }> {
  const jar = cookieFetch();
  const client = createClient({ baseUrl: env.stack.baseUrl, storage: memoryStorage(), fetch: jar.fetch });
  await signUpSignedIn(client, { email: freshEmail("oauth"), password: PASSWORD, name: "OAuth User" });
  return { client, fetch: jar.fetch };
}

/** Registers a public client with refresh tokens, as MCP clients do; answers its id. */
async function register(name: string): Promise<string> {
  const res = await fetch(metadata.registration_endpoint, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      client_name: name,
      client_uri: "https://notes.example",
      redirect_uris: [REDIRECT_URI],
      grant_types: ["authorization_code", "refresh_token"],
      token_endpoint_auth_method: "none",
    }),
  });
  const body = (await res.json()) as { client_id: string };
  expect(res.status, JSON.stringify(body)).toBe(201);
  return body.client_id;
}

/** Follows redirects in the browser from `from` to the web app's origin or the client's redirect URI. */
async function follow(browser: FetchLike, from: string): Promise<URL> {
  let url = new URL(from);
  for (let hop = 0; hop < 20; hop++) {
    if (url.origin === WEB || url.href.startsWith(REDIRECT_URI)) return url;
    const res = await browser(url.href, { credentials: "include", redirect: "manual" });
    await res.body?.cancel();
    const location = res.headers.get("location");
    if (!location) throw new Error(`${url.href} answered ${res.status}, not a redirect`);
    url = new URL(location, url);
  }
  throw new Error(`more than 20 redirects from ${from}`);
}

/** An authorization request with PKCE S256, followed to the consent page; answers the page's URL and the verifier. */
async function toConsentPage(browser: FetchLike, clientId: string, scope: string): Promise<{ page: URL; verifier: string }> {
  const verifier = randomBytes(32).toString("base64url");
  const url = new URL(metadata.authorization_endpoint);
  url.search = new URLSearchParams({
    response_type: "code",
    client_id: clientId,
    redirect_uri: REDIRECT_URI,
    scope,
    state: "st-1",
    code_challenge: createHash("sha256").update(verifier).digest("base64url"),
    code_challenge_method: "S256",
  }).toString();
  const page = await follow(browser, url.href);
  expect(page.pathname, page.href).toBe("/oauth/consent");
  return { page, verifier };
}

/** A form POST to the token endpoint, as the client sends it. */
async function token(form: Record<string, string>): Promise<{ status: number; body: Record<string, string> }> {
  const res = await fetch(metadata.token_endpoint, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(form).toString(),
  });
  return { status: res.status, body: (await res.json()) as Record<string, string> };
}

describe("the consent page's calls", () => {
  it("shows the client's public facts, grants a narrower scope, and the browser lands on the client with a code it exchanges", async () => {
    const { client, fetch: browser } = await user();
    const clientId = await register("Notes app");
    const { page, verifier } = await toConsentPage(browser, clientId, "openid email mcp:read mcp:write");
    expect(new URLSearchParams(page.search).get("client_id")).toBe(clientId);

    expect(await client.auth.oauth2.publicClient({ clientId })).toMatchObject({
      client_id: clientId,
      client_name: "Notes app",
      client_uri: "https://notes.example",
    });
    await expect(client.auth.oauth2.publicClient({ clientId: "no-such-client" })).rejects.toMatchObject({ status: 404, code: "not_found" });

    // An altered query is refused, and the session goes on (the page may say so and stay signed in).
    const altered = new URLSearchParams(page.search);
    altered.set("scope", "openid email mcp:read mcp:write profile");
    await expect(client.auth.oauth2.consent({ accept: true, oauthQuery: `?${altered}` })).rejects.toMatchObject({
      status: 401,
      code: "invalid_signature",
    });
    expect(client.auth.token()).not.toBeNull();
    // A scope that was not asked for is refused.
    await expect(client.auth.oauth2.consent({ accept: true, scope: "profile", oauthQuery: page.search })).rejects.toMatchObject({
      status: 400,
    });

    // A parameter added to the address after identity signed it is left out of oauth_query.
    const next = await client.auth.oauth2.consent({ accept: true, scope: "email mcp:read", oauthQuery: `${page.search}&utm_source=mail` });
    const landed = await follow(browser, next);
    expect(landed.href.startsWith(REDIRECT_URI), landed.href).toBe(true);
    expect(landed.searchParams.get("state")).toBe("st-1");
    const code = landed.searchParams.get("code") ?? "";
    const exchanged = await token({
      grant_type: "authorization_code",
      code,
      redirect_uri: REDIRECT_URI,
      client_id: clientId,
      code_verifier: verifier,
    });
    expect(exchanged.status, JSON.stringify(exchanged.body)).toBe(200);
    const granted = (exchanged.body.scope ?? "").split(" ");
    expect(granted).toContain("mcp:read");
    expect(granted).not.toContain("mcp:write");
    expect(exchanged.body.refresh_token).toBeTruthy();
  });

  it("a refusal lands on the client with error=access_denied, and nothing is authorized", async () => {
    const { client, fetch: browser } = await user();
    const clientId = await register("Refused app");
    const { page } = await toConsentPage(browser, clientId, "openid mcp:read");
    const landed = await follow(browser, await client.auth.oauth2.consent({ accept: false, oauthQuery: page.search }));
    expect(landed.href.startsWith(REDIRECT_URI), landed.href).toBe(true);
    expect([landed.searchParams.get("error"), landed.searchParams.get("code")]).toEqual(["access_denied", null]);
    expect(await client.auth.oauth2.getConsents()).toEqual([]);
  });
});

describe("authorized applications", () => {
  it("lists the user's applications with their scopes; revoking one ends its refresh tokens at once and asks consent again", async () => {
    const { client, fetch: browser } = await user();
    const other = await user();
    const clientId = await register("Planner");
    const { page, verifier } = await toConsentPage(browser, clientId, "openid profile mcp:read");
    const landed = await follow(browser, await client.auth.oauth2.consent({ accept: true, oauthQuery: page.search }));
    const code = landed.searchParams.get("code") ?? "";
    const tokens = await token({
      grant_type: "authorization_code",
      code,
      redirect_uri: REDIRECT_URI,
      client_id: clientId,
      code_verifier: verifier,
    });
    expect(tokens.status, JSON.stringify(tokens.body)).toBe(200);

    const apps = await client.auth.oauth2.getConsents();
    expect(apps).toHaveLength(1);
    const [app] = apps;
    expect(app).toMatchObject({ clientId, clientName: "Planner", clientUri: "https://notes.example", expiresAt: expect.any(String) });
    expect([...(app?.scopes ?? [])].sort()).toEqual(["mcp:read", "openid", "profile"]);
    expect(Date.parse(app?.createdAt ?? "")).toBeGreaterThan(Date.now() - 60_000);
    const id = app?.id ?? "";
    expect(await client.auth.oauth2.getConsent({ id })).toEqual(app);
    // Another user sees nothing of it, and cannot revoke it.
    expect(await other.client.auth.oauth2.getConsents()).toEqual([]);
    await expect(other.client.auth.oauth2.getConsent({ id })).rejects.toMatchObject({ status: 404, code: "not_found" });
    await expect(other.client.auth.oauth2.deleteConsent({ id })).rejects.toMatchObject({ status: 404, code: "not_found" });

    await client.auth.oauth2.deleteConsent({ id });
    expect(await client.auth.oauth2.getConsents()).toEqual([]);
    await expect(client.auth.oauth2.getConsent({ id })).rejects.toMatchObject({ status: 404, code: "not_found" });
    const refreshed = await token({ grant_type: "refresh_token", refresh_token: tokens.body.refresh_token ?? "", client_id: clientId });
    expect([refreshed.status, refreshed.body.error]).toEqual([400, "invalid_grant"]);
    // The next authorization request asks again.
    await toConsentPage(browser, clientId, "openid profile mcp:read");
  });

  it("refuses the calls without a session", async () => {
    const client = createClient({ baseUrl: env.stack.baseUrl, storage: memoryStorage(), fetch: cookieFetch().fetch });
    await expect(client.auth.oauth2.getConsents()).rejects.toMatchObject({ status: 401 });
    await expect(client.auth.oauth2.deleteConsent({ id: "x" })).rejects.toMatchObject({ status: 401 });
  });
});

describe("signedConsentQuery", () => {
  it("keeps sig, ba_param and the names it lists, in order, and nothing else; undefined without a signature", () => {
    const signed = "client_id=c1&scope=openid+mcp%3Aread&ba_param=ba_param&ba_param=client_id&ba_param=scope&sig=abc";
    expect(signedConsentQuery(`?${signed}&utm_source=mail`)).toBe(signed);
    expect(signedConsentQuery(signed)).toBe(signed);
    expect(signedConsentQuery("?client_id=c1&scope=openid")).toBeUndefined();
    expect(signedConsentQuery("?client_id=c1&sig=abc")).toBeUndefined();
  });
});
