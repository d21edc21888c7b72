import { createHash, randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { expect } from "vitest";
import { identityKit, type Kit, ORIGIN } from "./kit.js";
import { Browser } from "./oidc-kit.js";

// The authorization server's tests (oauth-*.test.ts): identity listening on a free loopback port
// (its BASE_URL, so the issuer is that address), real PostgreSQL, and browsers with cookie jars
// (test/oidc-kit.ts) that walk the redirects a real browser would, with the web app's sign-in and
// consent pages (on ORIGIN) played by the test: it signs in through identity's JSON routes and
// posts the consent decision as the page does.

export const PASSWORD = "correct horse battery";
/** A client's redirect URI: never fetched, the browser stops there and hands the URL to the client. */
export const REDIRECT_URI = "http://127.0.0.1:9/callback";

/** A running identity and the pieces a test of the authorization server needs. */
export interface OAuthKit {
  baseUrl: string;
  kit: Kit;
  /** `{BASE_URL}/api/mcp`, the one resource. */
  resource: string;
  close(): Promise<void>;
}

/** Starts identity on a free port with `env` (and an optional clock for its sessions and keys). */
export async function startIdentity(options: { env?: Record<string, string>; now?: () => number } = {}): Promise<OAuthKit> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const kit = await identityKit({ env: { BASE_URL: baseUrl, ...options.env }, ...(options.now ? { now: options.now } : {}) });
  server.on("request", kit.app);
  return {
    baseUrl,
    kit,
    resource: `${baseUrl}/api/mcp`,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await kit.close();
    },
  };
}

let counter = 0;

/** JSON to identity from the web app's origin, in `browser`'s cookie jar. */
export function sendJson(browser: Browser, url: string, body: unknown): Promise<Response> {
  return browser.request(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json", origin: ORIGIN },
    body: JSON.stringify(body),
  });
}

/** Signs a new user up in `browser` (the session cookie lands in its jar); returns the user. */
export async function signUp(ctx: OAuthKit, browser: Browser, label = "user"): Promise<{ id: string; email: string }> {
  counter += 1;
  const email = `${label}-${counter}-${Date.now()}@example.com`;
  const res = await sendJson(browser, `${ctx.baseUrl}/api/auth/sign-up/email`, { email, password: PASSWORD, name: `User ${counter}` });
  expect(res.status, await res.clone().text()).toBe(200);
  return ((await res.json()) as { user: { id: string; email: string } }).user;
}

/** Where a browser's walk from an authorization request stopped. */
export type Stop = { at: "sign-in"; url: URL; callbackURL: string } | { at: "consent"; url: URL } | { at: "client"; url: URL };

/** Follows redirects from `from` to the web app's sign-in or consent page, or to the client's redirect URI. */
export async function walk(browser: Browser, from: string | URL, redirectUri = REDIRECT_URI): Promise<Stop> {
  const url = await browser.follow(from, (next) => next.origin === ORIGIN || next.href.startsWith(redirectUri));
  if (url.href.startsWith(redirectUri)) return { at: "client", url };
  if (url.pathname === "/sign-in") return { at: "sign-in", url, callbackURL: url.searchParams.get("callbackURL") ?? "" };
  if (url.pathname === "/oauth/consent") return { at: "consent", url };
  throw new Error(`unexpected stop at ${url.href}`);
}

/** The consent page's POST: its decision and its own query string; answers identity's response. */
export function postConsent(ctx: OAuthKit, browser: Browser, page: URL, decision: { accept: boolean; scope?: string }): Promise<Response> {
  return sendJson(browser, `${ctx.baseUrl}/api/auth/oauth2/consent`, { ...decision, oauth_query: page.search.slice(1) });
}

/**
 * Walks an authorization request to the client's redirect URI as a signed-in user who accepts
 * every consent page on the way (and checks that a consent page was, or was not, shown).
 */
export async function authorize(
  ctx: OAuthKit,
  browser: Browser,
  url: string | URL,
  options: { expectConsent?: boolean; redirectUri?: string } = {},
): Promise<URL> {
  let stop = await walk(browser, url, options.redirectUri);
  if (stop.at === "sign-in") stop = await walk(browser, stop.callbackURL, options.redirectUri);
  if (options.expectConsent !== undefined) expect(stop.at === "consent").toBe(options.expectConsent);
  if (stop.at === "consent") {
    const res = await postConsent(ctx, browser, stop.url, { accept: true });
    const body = (await res.json()) as { redirect_uri: string };
    expect(res.status, JSON.stringify(body)).toBe(200);
    stop = await walk(browser, body.redirect_uri, options.redirectUri);
  }
  if (stop.at !== "client") throw new Error(`authorization stopped at ${stop.at}: ${stop.url.href}`);
  return stop.url;
}

/** Registers a client at the registration endpoint with `metadata`; answers the registration response. */
export async function register(ctx: OAuthKit, metadata: Record<string, unknown>): Promise<Record<string, unknown> & { client_id: string }> {
  const res = await fetch(`${ctx.baseUrl}/api/auth/oauth2/register`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ redirect_uris: [REDIRECT_URI], ...metadata }),
  });
  const body = (await res.json()) as Record<string, unknown> & { client_id: string };
  expect(res.status, JSON.stringify(body)).toBe(201);
  return body;
}

/** A form POST to one of the provider's endpoints (token, revocation), as a client sends it. */
export function postForm(url: string, form: Record<string, string>, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
    body: new URLSearchParams(form).toString(),
  });
}

/** A PKCE pair (S256). */
export function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString("base64url");
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") };
}

/** An authorization request URL with PKCE S256 (the challenge of `verifier`) unless `params` override it. */
export function authorizationUrl(ctx: OAuthKit, params: Record<string, string | undefined>): URL {
  const url = new URL(`${ctx.baseUrl}/api/auth/oauth2/authorize`);
  const all: Record<string, string | undefined> = { response_type: "code", redirect_uri: REDIRECT_URI, state: "s-1", ...params };
  for (const [name, value] of Object.entries(all)) if (value !== undefined) url.searchParams.set(name, value);
  return url;
}

/** Tokens as the token endpoint answers them. */
export interface Tokens {
  access_token: string;
  refresh_token?: string;
  id_token?: string;
  token_type: string;
  expires_in: number;
  scope?: string;
}

/** The token endpoint's answer to `form` (a public client names itself with client_id). */
export async function token(ctx: OAuthKit, form: Record<string, string>): Promise<{ status: number; body: Tokens & { error?: string } }> {
  const res = await postForm(`${ctx.baseUrl}/api/auth/oauth2/token`, form);
  return { status: res.status, body: (await res.json()) as Tokens & { error?: string } };
}

/** Registers a public client (token_endpoint_auth_method none) with the refresh_token grant, as MCP clients do. */
export async function registerPublicClient(ctx: OAuthKit, name = "MCP client"): Promise<string> {
  const client = await register(ctx, {
    client_name: name,
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    token_endpoint_auth_method: "none",
  });
  return client.client_id;
}

/**
 * A whole authorization of a public client for a signed-in browser: the request (PKCE S256),
 * the consent when asked, and the code exchanged; answers the tokens.
 */
export async function authorizeAndExchange(
  ctx: OAuthKit,
  browser: Browser,
  clientId: string,
  params: Record<string, string | undefined> & { scope: string },
  options: { expectConsent?: boolean } = {},
): Promise<Tokens> {
  const { verifier, challenge } = pkce();
  const url = authorizationUrl(ctx, { client_id: clientId, code_challenge: challenge, code_challenge_method: "S256", ...params });
  const callback = await authorize(ctx, browser, url, options);
  const code = callback.searchParams.get("code");
  expect(code, callback.href).toBeTruthy();
  const { status, body } = await token(ctx, {
    grant_type: "authorization_code",
    code: code ?? "",
    redirect_uri: REDIRECT_URI,
    client_id: clientId,
    code_verifier: verifier,
  });
  expect(status, JSON.stringify(body)).toBe(200);
  return body;
}

export { Browser };
