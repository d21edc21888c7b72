import { SecretBox } from "@app/secret-box";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_TOKEN_LIFETIME_S } from "../src/mcp/oauth.js";
import { sealContext } from "../src/mcp/servers.js";
import { authorize, callback, createMcpServer, type FakeAuthServer, fakeAuthServer, startFlow } from "./fixtures/oauth-server.js";
import { startTestApi, type TestApi } from "./helpers.js";

let t: TestApi;
let as: FakeAuthServer;
// The API's clock is real time (t.user() mints tokens at real time), moved ahead by a test.
let ahead = 0;
beforeAll(async () => {
  as = await fakeAuthServer();
  // The fake authorization server is plain http on 127.0.0.1: allowed by the development flag only.
  t = await startTestApi({ deps: { now: () => Date.now() + ahead }, env: { MCP_ALLOW_PRIVATE_URLS: "true" } });
});
afterAll(async () => {
  await t?.close();
  await as?.close();
});

async function newServer(auth: Record<string, string>, extra: Record<string, string> = {}): Promise<string> {
  const res = await createMcpServer(t, auth, { authorizationUrl: `${as.url}/authorize`, tokenUrl: `${as.url}/token`, ...extra });
  expect(res.status).toBe(201);
  return ((await res.json()) as { data: { id: string } }).data.id;
}

type User = Awaited<ReturnType<TestApi["user"]>>;

/** Starts a flow whose code `code-1` the fake server will accept. */
async function start(u: User, extra: Record<string, string> = {}) {
  const serverId = await newServer(u.auth, extra);
  const flow = await startFlow(t, u, serverId);
  as.challenges.set("code-1", flow.challenge);
  return { serverId, ...flow };
}

describe("GET /api/mcp-oauth/authorize (the cookie exception)", () => {
  it("answers 401 without a valid session cookie, even with a valid bearer", async () => {
    const u = await t.user();
    const serverId = await newServer(u.auth);
    expect((await authorize(t, serverId, {})).status).toBe(401);
    expect((await authorize(t, serverId, u.auth)).status).toBe(401);
    expect((await authorize(t, serverId, { cookie: "identity.session_token=forged.value" })).status).toBe(401);
    expect(t.stub.calls.getSession.every((c) => c.authorization === undefined)).toBe(true);
  });

  it("redirects a cookie-authenticated user to the authorization server with PKCE; 404 for another user's server", async () => {
    const u = await t.user();
    const other = await t.user();
    const serverId = await newServer(u.auth);
    const res = await authorize(t, serverId, { cookie: t.stub.addSession(u) });
    expect(res.status).toBe(302);
    const location = new URL(res.headers.get("location") ?? "");
    expect(`${location.origin}${location.pathname}`).toBe(`${as.url}/authorize`);
    expect(Object.fromEntries(location.searchParams)).toMatchObject({
      response_type: "code",
      client_id: "client-1",
      code_challenge_method: "S256",
      scope: "tools",
      redirect_uri: `${t.config.baseUrl}/api/mcp-oauth/callback`,
    });
    expect(location.searchParams.get("code_challenge")).toMatch(/^[\w-]{43}$/);
    expect((await authorize(t, serverId, { cookie: t.stub.addSession(other) })).status).toBe(404);
  });

  it("sets the flow's nonce cookie: HttpOnly, SameSite=Lax, scoped to the OAuth routes (http base URL)", async () => {
    const u = await t.user();
    const { setCookie, nonceCookie, state } = await start(u);
    expect(setCookie).toMatch(/^mcp_oauth_nonce=[\w-]{43}; Max-Age=600; Path=\/api\/mcp-oauth; HttpOnly; SameSite=Lax$/);
    const row = await t.db.prisma.mcpOAuthState.findFirstOrThrow({ where: { userId: u.id } });
    // Only a hash of the nonce is stored.
    expect(row.nonceHash).toMatch(/^[0-9a-f]{64}$/);
    expect(row.nonceHash).not.toContain(nonceCookie.split("=")[1]);
    expect(state).not.toBe("");
  });
});

describe("MCP OAuth callback", () => {
  it("exchanges the code with the verifier, stores tokens encrypted, and the state is single use", async () => {
    const u = await t.user();
    const { serverId, state, nonceCookie } = await start(u);
    const res = await callback(t, `code=code-1&state=${state}`, nonceCookie);
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe(`${t.config.mcpReturnUrl}?mcp=connected&serverId=${serverId}`);
    expect(res.headers.getSetCookie()).toContain("mcp_oauth_nonce=; Max-Age=0; Path=/api/mcp-oauth; HttpOnly; SameSite=Lax");
    expect(as.forms.at(-1)?.get("grant_type")).toBe("authorization_code");
    const row = await t.db.prisma.mcpServer.findUniqueOrThrow({ where: { id: serverId } });
    expect(row.accessToken).not.toContain("at-secret-123");
    const box = new SecretBox(t.config.dataEncryptionKey, "mcp-oauth-tokens");
    expect(box.open(row.accessToken ?? "", sealContext(serverId, "access_token"))).toBe("at-secret-123");
    expect(box.open(row.refreshToken ?? "", sealContext(serverId, "refresh_token"))).toBe("rt-secret-456");
    expect(box.open(row.accessToken ?? "", sealContext("another-server", "access_token"))).toBeUndefined();
    const view = (await (await fetch(`${t.url}/api/mcp-servers/${serverId}`, { headers: u.auth })).json()) as {
      data: { connected: boolean };
    };
    expect(view.data.connected).toBe(true);
    expect(JSON.stringify(view)).not.toContain("at-secret");
    expect((await callback(t, `code=code-1&state=${state}`, nonceCookie)).status).toBe(400); // replay
    expect(await t.db.prisma.mcpOAuthState.count({ where: { serverId } })).toBe(0);
  });

  it("refuses an expired state, an unknown state, and a denied authorization", async () => {
    const u = await t.user();
    const expired = await start(u);
    ahead = 11 * 60 * 1000;
    expect((await callback(t, `code=code-1&state=${expired.state}`, expired.nonceCookie)).status).toBe(400);
    ahead = 0;
    expect((await callback(t, "code=code-1&state=never-issued", expired.nonceCookie)).status).toBe(400);
    const denied = await start(u);
    expect((await callback(t, `error=access_denied&state=${denied.state}`, denied.nonceCookie)).status).toBe(400);
    const row = await t.db.prisma.mcpServer.findUniqueOrThrow({ where: { id: denied.serverId } });
    expect(row.accessToken).toBeNull();
  });

  it("is bound to the browser that started the flow: no nonce cookie, or another browser's, answers 400 and stores nothing", async () => {
    const victim = await t.user();
    const attacker = await t.user();
    // The attacker starts a flow on their own server and lures the victim's browser (which holds
    // no nonce, or its own) to the callback with the attacker's state and a code.
    const planted = await start(attacker);
    const missing = await callback(t, `code=code-1&state=${planted.state}`);
    expect(missing.status).toBe(400);
    expect(await missing.json()).toEqual({ ok: false, error: { code: "bad_request", message: expect.stringMatching(/browser/) } });
    expect(missing.headers.getSetCookie()).toContain("mcp_oauth_nonce=; Max-Age=0; Path=/api/mcp-oauth; HttpOnly; SameSite=Lax");

    const second = await start(attacker);
    const victimsOwn = await start(victim);
    const wrong = await callback(t, `code=code-1&state=${second.state}`, victimsOwn.nonceCookie);
    expect(wrong.status).toBe(400);
    for (const serverId of [planted.serverId, second.serverId]) {
      expect((await t.db.prisma.mcpServer.findUniqueOrThrow({ where: { id: serverId } })).accessToken).toBeNull();
    }
    // A failed check still spends the state.
    expect((await callback(t, `code=code-1&state=${second.state}`, second.nonceCookie)).status).toBe(400);
    // The victim's own flow, from the victim's browser, still works.
    expect((await callback(t, `code=code-1&state=${victimsOwn.state}`, victimsOwn.nonceCookie)).status).toBe(302);
  });

  it("checks the RFC 9207 issuer when the server names one", async () => {
    const u = await t.user();
    const issuer = "https://as.example";
    const wrong = await start(u, { issuer });
    expect((await callback(t, `code=code-1&state=${wrong.state}&iss=https://evil.example`, wrong.nonceCookie)).status).toBe(400);
    const absent = await start(u, { issuer });
    expect((await callback(t, `code=code-1&state=${absent.state}`, absent.nonceCookie)).status).toBe(400);
    const right = await start(u, { issuer });
    expect((await callback(t, `code=code-1&state=${right.state}&iss=${encodeURIComponent(issuer)}`, right.nonceCookie)).status).toBe(302);
  });

  it("bounds a huge expires_in to 10 years instead of failing with 500", async () => {
    const u = await t.user();
    as.tokenExtra = { expires_in: 1e300 };
    try {
      const flow = await start(u);
      const before = Date.now();
      const res = await callback(t, `code=code-1&state=${flow.state}`, flow.nonceCookie);
      const after = Date.now();
      expect(res.status).toBe(302);
      const row = await t.db.prisma.mcpServer.findUniqueOrThrow({ where: { id: flow.serverId } });
      expect(row.tokenExpiresAt?.getTime()).toBeGreaterThanOrEqual(before + MAX_TOKEN_LIFETIME_S * 1000);
      expect(row.tokenExpiresAt?.getTime()).toBeLessThanOrEqual(after + MAX_TOKEN_LIFETIME_S * 1000);
    } finally {
      as.tokenExtra = {};
    }
  });
});
