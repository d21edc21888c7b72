import { createHash, randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type E2eStack, openBrowser, STARTUP_MS, startE2eStack, TEST_MS, WAIT_MS } from "./harness.js";
import { checkPage } from "./page-checks.js";
import { longName } from "./seed.js";

// The product as an OAuth 2.1 authorization server, in Chromium against the real stack: a
// third-party app registers at the advertised registration endpoint and sends the browser with an
// authorization request (PKCE S256); the web app's sign-in page comes first, then its consent page;
// Allow (one scope unticked) lands on the app's redirect URI (a small local HTTP server) with a
// code the app exchanges, Deny with error=access_denied. Account → Authorized apps lists the app,
// and Revoke removes it and ends its refresh token.
let env: E2eStack;
let browser: Browser;
let page: Page;
/** Uncaught page errors and console errors (a CSP violation shows up here). */
const problems: string[] = [];
// A fixed address (each test file has its own database), so the screenshots do not change between runs.
const EMAIL = "grace@example.com";
const PASSWORD = "correct horse battery";
/** A long name, as page checks want real content. */
const APP_NAME = longName(7);
let metadata: { authorization_endpoint: string; token_endpoint: string; registration_endpoint: string };

/** The app's redirect target: answers a small page and remembers every URL the browser brought. */
let target: Server;
let redirectUri = "";
const landings: URL[] = [];

beforeAll(async () => {
  target = createServer((req, res) => {
    landings.push(new URL(req.url ?? "/", redirectUri));
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    res.end('<!doctype html><html lang="en"><title>Back in the app</title><h1>Back in the app</h1></html>');
  });
  await new Promise<void>((resolve) => target.listen(0, "127.0.0.1", resolve));
  redirectUri = `http://127.0.0.1:${(target.address() as AddressInfo).port}/callback`;
  [env, { browser, page }] = await Promise.all([startE2eStack(), openBrowser()]);
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() === "error" && !message.text().startsWith("Failed to load resource")) problems.push(message.text());
  });
  const discovery = await fetch(`${env.baseUrl}/.well-known/openid-configuration`);
  metadata = (await discovery.json()) as typeof metadata;
}, STARTUP_MS);
afterAll(async () => {
  await browser?.close();
  await env?.stop();
  target?.closeAllConnections();
  await new Promise((resolve) => target?.close(resolve));
});

/** Registers a public client with refresh tokens at the advertised registration endpoint, as MCP clients do. */
async function register(name: string): Promise<string> {
  const res = await fetch(metadata.registration_endpoint, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      client_name: name,
      client_uri: "https://notes.example/about",
      redirect_uris: [redirectUri],
      grant_types: ["authorization_code", "refresh_token"],
      token_endpoint_auth_method: "none",
    }),
  });
  const body = (await res.json()) as { client_id: string };
  expect(res.status, JSON.stringify(body)).toBe(201);
  return body.client_id;
}

/**
 * An authorization request with PKCE S256 (and `extra` parameters); answers its URL, the verifier
 * and the state.
 */
function authorization(
  clientId: string,
  scope: string,
  extra: Record<string, string> = {},
): { url: string; verifier: string; state: string } {
  const verifier = randomBytes(32).toString("base64url");
  const state = randomBytes(8).toString("hex");
  const url = new URL(metadata.authorization_endpoint);
  url.search = new URLSearchParams({
    response_type: "code",
    client_id: clientId,
    redirect_uri: redirectUri,
    scope,
    state,
    code_challenge: createHash("sha256").update(verifier).digest("base64url"),
    code_challenge_method: "S256",
    ...extra,
  }).toString();
  return { url: url.href, verifier, state };
}

/** Waits until the browser is on the app's redirect URI; answers the URL it brought. */
async function landed(on: Page): Promise<URL> {
  await on.waitForURL((url) => url.href.startsWith(redirectUri), { timeout: WAIT_MS });
  return new URL(on.url());
}

/** A form POST to the token endpoint, as the app sends it. */
async function token(form: Record<string, string>): Promise<{ status: number; body: Record<string, string> }> {
  const res = await fetch(metadata.token_endpoint, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(form).toString(),
  });
  return { status: res.status, body: (await res.json()) as Record<string, string> };
}

let clientId = "";
let refreshToken = "";
/** The consent page's address as identity sent the browser there (for the signed-out visit). */
let consentUrl = "";

describe("authorizing an app in Chromium, against the real stack", { timeout: TEST_MS }, () => {
  it("signs in first, then shows the consent page; Allow with one scope unticked lands on the app with a code it exchanges", async () => {
    clientId = await register(APP_NAME);
    // offline_access counts only with prompt=consent (OpenID Connect Core 11; oidc-provider drops it otherwise).
    const request = authorization(clientId, "openid profile email offline_access mcp:read mcp:write", { prompt: "consent" });
    await page.goto(request.url);
    // No session: the web app's sign-in page, saying why.
    await page.locator("#authorization-sign-in").waitFor();
    expect(new URL(page.url()).origin).toBe(new URL(env.webUrl).origin);
    await page.locator("#signup-form input[name=name]").fill("Grace Hopper");
    await page.locator("#signup-form input[name=email]").fill(EMAIL);
    await page.locator("#signup-form input[name=password]").fill(PASSWORD);
    await page.locator("#signup-form button[type=submit]").click();

    // Signed in, back through identity to the consent page.
    await page.locator("#consent-body[data-state=ready]").waitFor();
    consentUrl = page.url();
    expect(consentUrl.startsWith(`${env.webUrl}/#/oauth/consent?`)).toBe(true);
    expect(new URLSearchParams(new URL(consentUrl).hash.split("?")[1]).get("client_id")).toBe(clientId);
    expect(await page.locator("#consent-app").textContent()).toBe(APP_NAME);
    expect(await page.locator("#consent-site-link").textContent()).toBe("notes.example");
    expect(await page.locator("#consent-who").textContent()).toContain(EMAIL);
    expect(await page.locator("#consent-scopes > li .scope-title").allTextContents()).toEqual([
      "Know that it is you",
      "See your name and picture",
      "See your email address",
      "Stay connected when you are away",
      "Read your projects, tasks and chats",
      "Create tasks and post messages",
    ]);
    await checkPage(page, "consent page", "oauth-consent");

    await page.locator("#consent-scopes input[value='mcp:write']").uncheck();
    await page.locator("#consent-allow").click();
    const back = await landed(page);
    expect(back.searchParams.get("state")).toBe(request.state);
    const code = back.searchParams.get("code") ?? "";
    expect(code).not.toBe("");
    // The app's server got the same address (the browser also asks it for a favicon).
    const callbacks = landings.filter((url) => url.pathname === "/callback");
    expect(callbacks.at(-1)?.searchParams.get("code")).toBe(code);

    const tokens = await token({
      grant_type: "authorization_code",
      code,
      redirect_uri: redirectUri,
      client_id: clientId,
      code_verifier: request.verifier,
    });
    expect(tokens.status, JSON.stringify(tokens.body)).toBe(200);
    const granted = (tokens.body.scope ?? "").split(" ");
    expect(granted).toContain("mcp:read");
    expect(granted).not.toContain("mcp:write");
    refreshToken = tokens.body.refresh_token ?? "";
    expect(refreshToken).not.toBe("");
  });

  it("Deny lands on the app with error=access_denied and no code", async () => {
    const refused = await register("Refused app");
    const request = authorization(refused, "openid mcp:read");
    await page.goto(request.url);
    await page.locator("#consent-body[data-state=ready]").waitFor();
    expect(await page.locator("#consent-app").textContent()).toBe("Refused app");
    await page.locator("#consent-deny").click();
    const back = await landed(page);
    expect([back.searchParams.get("error"), back.searchParams.get("code"), back.searchParams.get("state")]).toEqual([
      "access_denied",
      null,
      request.state,
    ]);
  });

  it("signed out, the consent page asks to sign in first and opens again after, with the same query", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    context.setDefaultTimeout(WAIT_MS);
    try {
      const other = await context.newPage();
      // The address identity sent the browser to: the page's path with the signed query.
      const query = new URL(consentUrl).hash.split("?")[1] ?? "";
      await other.goto(`${env.webUrl}/oauth/consent?${query}`);
      await other.locator("#consent-sign-in").waitFor();
      await other.locator("#consent-auth #signin-form input[name=email]").fill(EMAIL);
      await other.locator("#consent-auth #signin-form input[name=password]").fill(PASSWORD);
      await other.locator("#consent-auth #signin-form button[type=submit]").click();
      await other.locator("#consent-body[data-state=ready]").waitFor();
      expect(await other.evaluate(() => location.hash)).toBe(`#/oauth/consent?${query}`);
      expect(await other.locator("#consent-app").textContent()).toBe(APP_NAME);
    } finally {
      await context.close();
    }
  });

  it("Account → Authorized apps lists the app with what it may do; Revoke removes it and ends its refresh token", async () => {
    await page.goto(`${env.webUrl}/#/account`);
    await page.locator("#account-apps-link").click();
    const row = page.locator(`#authorized-apps li[data-id="${clientId}"]`);
    await row.waitFor();
    expect(await row.locator("strong").textContent()).toBe(APP_NAME);
    const may = await row.locator(".app-scopes li").allTextContents();
    expect(may).toContain("Read your projects, tasks and chats");
    expect(may).not.toContain("Create tasks and post messages");
    expect(await page.locator("#revoke-words").textContent()).toMatch(/refresh tokens at once.*until they expire/);
    // The refused app is not listed: nothing was granted to it.
    expect(await page.locator("#authorized-apps > li").count()).toBe(1);
    await checkPage(page, "authorized apps", "authorized-apps");

    await row.getByRole("button", { name: `Revoke ${APP_NAME}` }).click();
    await page.locator("#confirm-ok").click();
    await page.locator("#authorized-apps-empty").waitFor();
    await page.locator("#notice", { hasText: `${APP_NAME} is revoked` }).waitFor();
    const refreshed = await token({ grant_type: "refresh_token", refresh_token: refreshToken, client_id: clientId });
    expect([refreshed.status, refreshed.body.error]).toEqual([400, "invalid_grant"]);
    // Reloaded, the list is still empty.
    await page.reload();
    await page.locator("#authorized-apps-empty").waitFor();
  });

  it("raised no page error and no console error", () => {
    expect(problems).toEqual([]);
  });
});
