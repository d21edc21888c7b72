import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type McpServerFixture, startMcpServer } from "./fixtures/mcp-server.js";
import { authorize, callback } from "./fixtures/oauth-server.js";
import { startTestApi, type TestApi } from "./helpers.js";

type User = Awaited<ReturnType<TestApi["user"]>>;
interface Envelope<T = unknown> {
  ok: boolean;
  data: T;
  error: { code: string; message: string };
}

let t: TestApi;
let mcp: McpServerFixture;
let fallback: McpServerFixture;
// The API's clock is real time (t.user() mints tokens at real time), moved ahead by a test.
let ahead = 0;
beforeAll(async () => {
  mcp = await startMcpServer();
  fallback = await startMcpServer({ advertiseResourceMetadata: false });
  // The fixtures are plain http on 127.0.0.1: reachable with the development flag only.
  t = await startTestApi({
    deps: { now: () => Date.now() + ahead },
    env: { MCP_ALLOW_PRIVATE_URLS: "true", MCP_CALL_TIMEOUT_MS: "1500", MCP_MAX_RESULT_BYTES: "65536", MCP_MAX_CALLS_PER_USER: "2" },
  });
});
afterAll(async () => {
  await t?.close();
  await mcp?.close();
  await fallback?.close();
});

async function api<T>(u: User, method: string, path: string, body?: unknown): Promise<{ status: number; body: Envelope<T> }> {
  const res = await fetch(`${t.url}${path}`, {
    method,
    headers: { ...u.auth, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as Envelope<T> };
}

/** Adds a server by URL alone. */
async function add(u: User, url: string): Promise<string> {
  const res = await api<{ id: string; status: string }>(u, "POST", "/api/mcp-servers", { name: "Fixture", url });
  expect(res.status).toBe(201);
  expect(res.body.data.status).toBe("not_connected");
  return res.body.data.id;
}

/** What the browser does: authorize (session cookie) → the authorization server (auto-approves) → the callback (nonce cookie). */
async function connect(u: User, serverId: string): Promise<Response> {
  const start = await fetch(`${t.url}/api/mcp-oauth/authorize?serverId=${serverId}`, {
    headers: { cookie: t.stub.addSession(u) },
    redirect: "manual",
  });
  if (start.status !== 302) return start;
  const nonceCookie = (start.headers.getSetCookie().find((c) => c.startsWith("mcp_oauth_nonce=")) ?? "").split(";")[0];
  const approved = await fetch(start.headers.get("location") ?? "", { redirect: "manual" });
  expect(approved.status).toBe(302);
  const back = new URL(approved.headers.get("location") ?? "");
  expect(`${back.origin}${back.pathname}`).toBe(t.config.mcpRedirectUri);
  return callback(t, back.searchParams.toString(), nonceCookie);
}

async function connected(u: User, url = mcp.url): Promise<string> {
  const serverId = await add(u, url);
  const res = await connect(u, serverId);
  expect(res.status, await res.clone().text()).toBe(302);
  return serverId;
}

describe("MCP servers from a URL alone", () => {
  it("discovers through the 401's resource_metadata, registers, authorizes with PKCE + resource, lists and calls tools", async () => {
    const u = await t.user();
    const before = mcp.provider.counts.registrations;
    const serverId = await add(u, mcp.url);
    const start = await fetch(`${t.url}/api/mcp-oauth/authorize?serverId=${serverId}`, {
      headers: { cookie: t.stub.addSession(u) },
      redirect: "manual",
    });
    expect(start.status).toBe(302);
    const location = new URL(start.headers.get("location") ?? "");
    expect(`${location.origin}${location.pathname}`).toBe(`${mcp.issuer}authorize`);
    expect(Object.fromEntries(location.searchParams)).toMatchObject({
      response_type: "code",
      code_challenge_method: "S256",
      resource: mcp.url,
      redirect_uri: t.config.mcpRedirectUri,
      scope: "tools",
    });
    expect(mcp.provider.counts.registrations).toBe(before + 1);
    expect(mcp.provider.clients.get(location.searchParams.get("client_id") ?? "")?.redirect_uris).toEqual([t.config.mcpRedirectUri]);

    expect((await connect(u, serverId)).status).toBe(302);
    const view = await api<{ status: string; expiresAt: string; authorizationServer: string }>(u, "GET", `/api/mcp-servers/${serverId}`);
    expect(view.body.data).toMatchObject({ status: "connected", authorizationServer: mcp.issuer });
    expect(Date.parse(view.body.data.expiresAt)).toBeGreaterThan(Date.now());
    expect(JSON.stringify(view.body)).not.toMatch(/at-|rt-/);
    expect(mcp.provider.authorizations.at(-1)?.resource?.href).toBe(mcp.url);

    const tools = await api<Array<{ name: string; description: string; inputSchema: { properties: object } }>>(
      u,
      "GET",
      `/api/mcp-servers/${serverId}/tools`,
    );
    expect(tools.status).toBe(200);
    expect(tools.body.data.map((tool) => tool.name).sort()).toEqual(["add", "echo", "huge", "slow"]);
    expect(tools.body.data.find((tool) => tool.name === "echo")).toMatchObject({
      description: "Repeats the text",
      inputSchema: { type: "object", properties: { text: { type: "string" } } },
    });
    const call = await api(u, "POST", `/api/mcp-servers/${serverId}/tools/add/call`, { arguments: { a: 2, b: 3 } });
    expect(call.status).toBe(200);
    expect(call.body.data).toMatchObject({ content: [{ type: "text", text: "5" }], structuredContent: { sum: 5 } });
    // A second connect reuses the registered client.
    expect((await connect(u, serverId)).status).toBe(302);
    expect(mcp.provider.counts.registrations).toBe(before + 1);
  });

  it("discovers through the well-known fallback when the 401 names no metadata", async () => {
    const u = await t.user();
    const serverId = await connected(u, fallback.url);
    const probe = await fetch(fallback.url, { method: "POST" });
    expect(probe.headers.get("www-authenticate")).not.toMatch(/resource_metadata/);
    const call = await api(u, "POST", `/api/mcp-servers/${serverId}/tools/echo/call`, { arguments: { text: "hi" } });
    expect(call.body.data).toMatchObject({ content: [{ type: "text", text: "hi" }] });
  });

  it("finds the authorization server through OpenID discovery when RFC 8414 metadata is missing", async () => {
    const openId = await startMcpServer({ openIdOnly: true });
    try {
      const u = await t.user();
      const serverId = await connected(u, openId.url);
      expect((await api(u, "GET", `/api/mcp-servers/${serverId}/tools`)).status).toBe(200);
      expect(openId.provider.counts.exchanges).toBe(1);
    } finally {
      await openId.close();
    }
  });

  it("connects a server that asks for no authorization without an OAuth flow", async () => {
    const open = await startMcpServer({ open: true });
    try {
      const u = await t.user();
      const serverId = await add(u, open.url);
      const res = await authorize(t, serverId, { cookie: t.stub.addSession(u) });
      expect(res.headers.get("location")).toBe(`${t.config.mcpReturnUrl}?mcp=connected&serverId=${serverId}`);
      expect(res.headers.getSetCookie().some((c) => c.startsWith("mcp_oauth_nonce="))).toBe(false);
      const view = await api<{ status: string; expiresAt: null }>(u, "GET", `/api/mcp-servers/${serverId}`);
      expect(view.body.data).toMatchObject({ status: "connected", expiresAt: null });
      const call = await api(u, "POST", `/api/mcp-servers/${serverId}/tools/echo/call`, { arguments: { text: "open" } });
      expect(call.body.data).toMatchObject({ content: [{ text: "open" }] });
      expect(open.provider.counts.registrations).toBe(0);
    } finally {
      await open.close();
    }
  });

  it("answers 409 before connecting, 404 for another user's server; tool failures are results with isError", async () => {
    const u = await t.user();
    const fresh = await add(u, mcp.url);
    const before = await api(u, "GET", `/api/mcp-servers/${fresh}/tools`);
    expect([before.status, before.body.error.code]).toEqual([409, "mcp_reconnect_required"]);
    const serverId = await connected(u);
    const other = await t.user();
    expect((await api(other, "GET", `/api/mcp-servers/${serverId}/tools`)).status).toBe(404);
    const bad = await api(u, "POST", `/api/mcp-servers/${serverId}/tools/add/call`, { arguments: { a: "x" } });
    // MCP reports a tool's own failures as a result with isError (the call itself worked).
    expect([bad.status, bad.body.data]).toMatchObject([
      200,
      { isError: true, content: [{ text: expect.stringMatching(/Invalid arguments/) }] },
    ]);
    const unknown = await api(u, "POST", `/api/mcp-servers/${serverId}/tools/nope/call`, { arguments: {} });
    expect([unknown.status, unknown.body.data]).toMatchObject([
      200,
      { isError: true, content: [{ text: expect.stringMatching(/not found/) }] },
    ]);
    const invalid = await api(u, "POST", `/api/mcp-servers/${serverId}/tools/add/call`, { arguments: [1] });
    expect([invalid.status, invalid.body.error.code]).toEqual([400, "validation_failed"]);
  });
});

describe("MCP server settings", () => {
  it("a new URL drops the tokens and what discovery found; overrides stay optional and checked", async () => {
    const u = await t.user();
    const serverId = await connected(u);
    const patched = await api<{ status: string; authorizationServer: string | null; oauth: unknown }>(
      u,
      "PATCH",
      `/api/mcp-servers/${serverId}`,
      {
        url: fallback.url,
      },
    );
    expect(patched.body.data).toMatchObject({ status: "not_connected", authorizationServer: null, oauth: null });
    const row = await t.db.prisma.mcpServer.findUniqueOrThrow({ where: { id: serverId } });
    expect([row.accessToken, row.refreshToken, row.registeredClient, row.authServerMeta]).toEqual([null, null, null, null]);
    const half = await api(u, "POST", "/api/mcp-servers", { name: "x", url: mcp.url, oauth: { tokenUrl: "https://as.example/token" } });
    expect([half.status, half.body.error.code]).toEqual([400, "validation_failed"]);
    const scoped = await api<{ oauth: { scope: string; clientId: null } }>(u, "POST", "/api/mcp-servers", {
      name: "x",
      url: mcp.url,
      oauth: { scope: "tools" },
    });
    expect(scoped.body.data.oauth).toMatchObject({ scope: "tools", clientId: null });
  });
});

describe("MCP tokens", () => {
  it("refreshes a token about to expire before using it", async () => {
    const u = await t.user();
    const serverId = await connected(u);
    const refreshes = mcp.provider.counts.refreshes;
    const row = await t.db.prisma.mcpServer.findUniqueOrThrow({ where: { id: serverId } });
    ahead = 3600 * 1000; // the API's clock: the stored expiry has passed
    try {
      const call = await api(u, "POST", `/api/mcp-servers/${serverId}/tools/echo/call`, { arguments: { text: "again" } });
      expect(call.status).toBe(200);
    } finally {
      ahead = 0;
    }
    expect(mcp.provider.counts.refreshes).toBe(refreshes + 1);
    const after = await t.db.prisma.mcpServer.findUniqueOrThrow({ where: { id: serverId } });
    expect(after.accessToken).not.toBe(row.accessToken);
    expect(after.status).toBe("connected");
  });

  it("refreshes once when the server refuses the token, then succeeds", async () => {
    const u = await t.user();
    const serverId = await connected(u);
    const refreshes = mcp.provider.counts.refreshes;
    mcp.provider.dropAccessTokens();
    const call = await api(u, "POST", `/api/mcp-servers/${serverId}/tools/echo/call`, { arguments: { text: "x" } });
    expect(call.status).toBe(200);
    expect(mcp.provider.counts.refreshes).toBe(refreshes + 1);
  });

  it("a refresh that lost the race to another instance uses that instance's tokens instead of disconnecting", async () => {
    const u = await t.user();
    const serverId = await connected(u);
    const stale = await t.db.prisma.mcpServer.findUniqueOrThrow({ where: { id: serverId } });
    mcp.provider.dropAccessTokens();
    // "The other instance": refreshes and rotates the refresh token.
    expect((await api(u, "GET", `/api/mcp-servers/${serverId}/tools`)).status).toBe(200);
    // This instance still holds the row from before: its refresh token is spent.
    const token = await t.api.oauth.accessToken(stale, true);
    expect(mcp.provider.accessTokens.has(token ?? "")).toBe(true);
    expect((await t.db.prisma.mcpServer.findUniqueOrThrow({ where: { id: serverId } })).status).toBe("connected");
  });

  it("a revoked refresh token marks the server needs_reconnect and answers 409; connecting again fixes it", async () => {
    const u = await t.user();
    const serverId = await connected(u);
    mcp.provider.revokeAll();
    const call = await api(u, "GET", `/api/mcp-servers/${serverId}/tools`);
    expect([call.status, call.body.error.code]).toEqual([409, "mcp_reconnect_required"]);
    const view = await api<{ status: string; expiresAt: string | null }>(u, "GET", `/api/mcp-servers/${serverId}`);
    expect(view.body.data).toMatchObject({ status: "needs_reconnect", expiresAt: null });
    expect((await connect(u, serverId)).status).toBe(302);
    expect((await api(u, "GET", `/api/mcp-servers/${serverId}/tools`)).status).toBe(200);
  });
});

describe("MCP tool calls are bounded", () => {
  it("answers 504 mcp_upstream_timeout for a slow tool", async () => {
    const u = await t.user();
    const serverId = await connected(u);
    const call = await api(u, "POST", `/api/mcp-servers/${serverId}/tools/slow/call`, { arguments: { ms: 5_000 } });
    expect([call.status, call.body.error.code]).toEqual([504, "mcp_upstream_timeout"]);
  });

  it("answers 502 mcp_result_too_large for an answer over MCP_MAX_RESULT_BYTES", async () => {
    const u = await t.user();
    const serverId = await connected(u);
    const call = await api(u, "POST", `/api/mcp-servers/${serverId}/tools/huge/call`, { arguments: { bytes: 200_000 } });
    expect([call.status, call.body.error.code]).toEqual([502, "mcp_result_too_large"]);
    const small = await api(u, "POST", `/api/mcp-servers/${serverId}/tools/huge/call`, { arguments: { bytes: 1_000 } });
    expect(small.status).toBe(200);
  });

  it("holds a user to MCP_MAX_CALLS_PER_USER concurrent calls (429), and frees the slots afterwards", async () => {
    const u = await t.user();
    const serverId = await connected(u);
    const slow = () => api(u, "POST", `/api/mcp-servers/${serverId}/tools/slow/call`, { arguments: { ms: 400 } });
    const answers = await Promise.all([slow(), slow(), slow()]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 429]);
    expect((await slow()).status).toBe(200);
  });

  it("answers 502 mcp_upstream_unavailable when the server is down", async () => {
    const u = await t.user();
    const gone = await startMcpServer();
    const serverId = await add(u, gone.url);
    expect((await connect(u, serverId)).status).toBe(302);
    await gone.close();
    const call = await api(u, "GET", `/api/mcp-servers/${serverId}/tools`);
    expect([call.status, call.body.error.code]).toEqual([502, "mcp_upstream_unavailable"]);
    const again = await authorize(t, serverId, { cookie: t.stub.addSession(u) });
    expect(again.status).toBe(302);
    expect(new URL(again.headers.get("location") ?? "").searchParams.get("code")).toBe("mcp_upstream_unavailable");
  });
});
