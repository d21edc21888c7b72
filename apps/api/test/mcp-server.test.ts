import { buildHostileTokens, hostileAuthorizationCases } from "@app/auth-verify/testing";
import { discoverOAuthProtectedResourceMetadata, extractWWWAuthenticateParams } from "@modelcontextprotocol/sdk/client/auth.js";
import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, startTestApi, type TestApi } from "./helpers.js";
import { accessToken, connectAgent, post, structured, toolCall } from "./mcp-kit.js";
import { rawRequest } from "./raw-http.js";

let t: TestApi;
let base: string;
beforeAll(async () => {
  // The API is its own base URL here, so the SDK finds the metadata from /api/mcp alone.
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  t = await startTestApi({ baseUrl: base, port });
});
afterAll(() => t?.close());

const READ_TOOLS = ["get_task", "list_chats", "list_projects", "list_tasks", "search"];
const WRITE_TOOLS = ["add_task_message", "create_task"];
const INITIALIZE = {
  jsonrpc: "2.0",
  id: 0,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
};

describe("discovery", () => {
  it("answers 401 with the challenge that leads a client to the metadata, then to the authorization server", async () => {
    const res = await post(t, undefined, INITIALIZE);
    expect(res.status).toBe(401);
    const header = res.headers.get("www-authenticate") ?? "";
    expect(header).toBe(`Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/api/mcp", scope="mcp:read mcp:write"`);
    const { resourceMetadataUrl, scope, error } = extractWWWAuthenticateParams(res);
    expect({ scope, error }).toEqual({ scope: "mcp:read mcp:write", error: undefined });
    // The SDK's discovery from the server URL and the challenge, as its auth() does.
    const metadata = await discoverOAuthProtectedResourceMetadata(`${t.url}/api/mcp`, { resourceMetadataUrl });
    expect(metadata).toEqual({
      resource: `${base}/api/mcp`,
      authorization_servers: [base],
      scopes_supported: ["mcp:read", "mcp:write"],
      bearer_methods_supported: ["header"],
      resource_name: "Projects, tasks and chats (MCP)",
    });
    // Without the challenge too: the path-aware well-known address of the server URL.
    expect(await discoverOAuthProtectedResourceMetadata(`${t.url}/api/mcp`)).toEqual(metadata);
  });

  it("lets any origin read the metadata", async () => {
    const res = await fetch(`${t.url}/.well-known/oauth-protected-resource/api/mcp`, { headers: { origin: "https://agent.example" } });
    expect(res.status).toBe(200);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
  });

  it("refuses a bad token with invalid_token, its reason and the same metadata address", async () => {
    const u = await t.user();
    const res = await post(
      t,
      await accessToken(t, u.id, { exp: Math.floor(Date.now() / 1000) - 3600, iat: Math.floor(Date.now() / 1000) - 7200 }),
      INITIALIZE,
    );
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("token_expired");
    expect(res.headers.get("www-authenticate")).toBe(
      `Bearer error="invalid_token", error_description="The token has expired", resource_metadata="${base}/.well-known/oauth-protected-resource/api/mcp", scope="mcp:read mcp:write"`,
    );
  });
});

describe("tokens", () => {
  const refusedAtMcp = async (token: string) => {
    const res = await post(t, token, INITIALIZE);
    const code = ((await res.json()) as { error?: { code: string } }).error?.code;
    return { status: res.status, code, error: extractWWWAuthenticateParams(res).error };
  };

  it("refuses a get-session JWT at /api/mcp, and an MCP access token at every business route", async () => {
    const u = await t.user();
    expect(await refusedAtMcp(u.token)).toEqual({ status: 401, code: "invalid_claims", error: "invalid_token" });
    const mcpToken = await accessToken(t, u.id);
    for (const path of ["/api/tasks", "/api/me", "/api/projects"]) {
      const res = await fetch(`${t.url}${path}`, { headers: { authorization: `Bearer ${mcpToken}` } });
      expect(res.status, path).toBe(401);
    }
    // Even one whose audience is the business routes' (typ alone tells them apart).
    const sameAudience = await accessToken(t, u.id, { audience: t.config.audience });
    expect((await fetch(`${t.url}/api/tasks`, { headers: { authorization: `Bearer ${sameAudience}` } })).status).toBe(401);
    // A contract JWT minted for the resource's audience is still no access token.
    const contractForResource = await t.stub.mint(u, { audience: t.config.mcpServer.resource });
    expect((await refusedAtMcp(contractForResource)).status).toBe(401);
  });

  it("refuses a token for another resource or issuer, an expired one, one without client_id, and a foreign key", async () => {
    const u = await t.user();
    const now = Math.floor(Date.now() / 1000);
    expect(await refusedAtMcp(await accessToken(t, u.id, { audience: "https://other.example/mcp" }))).toMatchObject({
      status: 401,
      code: "invalid_claims",
    });
    expect(await refusedAtMcp(await accessToken(t, u.id, { audience: base }))).toMatchObject({ status: 401, code: "invalid_claims" });
    expect(await refusedAtMcp(await accessToken(t, u.id, { issuer: "https://evil.example" }))).toMatchObject({
      status: 401,
      code: "invalid_claims",
    });
    expect(await refusedAtMcp(await accessToken(t, u.id, { iat: now - 7200, exp: now - 60 }))).toMatchObject({
      status: 401,
      code: "token_expired",
    });
    expect(await refusedAtMcp(await accessToken(t, u.id, { clientId: null }))).toMatchObject({ status: 401, code: "invalid_claims" });
    const foreign = (await t.stub.mint(u, { foreignKey: true })).split(".");
    expect(await refusedAtMcp(`${(await accessToken(t, u.id)).split(".").slice(0, 2).join(".")}.${foreign[2]}`)).toMatchObject({
      status: 401,
    });
  });

  it("refuses the hostile corpus built for the resource, and every bad way to present a token, each with the challenge", async () => {
    const u = await t.user();
    const valid = await accessToken(t, u.id);
    const { issuer, resource } = t.config.mcpServer;
    const claims = { client_id: "c", scope: "mcp:read mcp:write" };
    const corpus = await buildHostileTokens({ key: t.stub.signingKey, issuer, audience: resource, subject: u.id, typ: "at+jwt", claims });
    const cases = [
      ...corpus.map(({ name, token }) => ({ name, headers: [["authorization", `Bearer ${token}`]] as Array<[string, string]> })),
      ...hostileAuthorizationCases(valid),
    ];
    for (const { name, headers } of cases) {
      const res = await rawRequest(`${t.url}/api/mcp`, {
        method: "POST",
        headers: [...headers, ["content-type", "application/json"], ["accept", "application/json, text/event-stream"]],
        body: JSON.stringify(INITIALIZE),
      });
      expect(res.status, name).toBe(401);
      expect(String(res.headers["www-authenticate"]), name).toContain(
        `resource_metadata="${base}/.well-known/oauth-protected-resource/api/mcp"`,
      );
      expect((res.json() as { ok: boolean }).ok, name).toBe(false);
    }
    expect((await post(t, valid, INITIALIZE)).status).toBe(200);
  });

  it("answers 403 insufficient_scope to a token without an MCP scope", async () => {
    const u = await t.user();
    const res = await post(t, await accessToken(t, u.id, { scope: "openid profile" }), INITIALIZE);
    expect(res.status).toBe(403);
    expect(extractWWWAuthenticateParams(res)).toMatchObject({ error: "insufficient_scope", scope: "mcp:read" });
    expect(await res.json()).toMatchObject({ jsonrpc: "2.0", id: 0, error: { data: { code: "insufficient_scope" } } });
  });
});

describe("tools and scopes", () => {
  it("lists only the tools the token's scopes allow", async () => {
    const u = await t.user();
    const names = async (scope: string) => {
      const client = await connectAgent(t, await accessToken(t, u.id, { scope }));
      const { tools } = await client.listTools();
      await client.close();
      return tools.map((tool) => tool.name).sort();
    };
    expect(await names("mcp:read")).toEqual(READ_TOOLS);
    expect(await names("mcp:write")).toEqual(WRITE_TOOLS);
    expect(await names("mcp:read mcp:write offline_access")).toEqual([...READ_TOOLS, ...WRITE_TOOLS].sort());
  });

  it("creates a task the same user then reads through GET /api/tasks with a get-session JWT, and adds a message to it", async () => {
    const u = await t.user();
    const client = await connectAgent(t, await accessToken(t, u.id));
    const task = structured<{ id: string; status: string }>(
      await client.callTool({ name: "create_task", arguments: { title: "From an agent", description: "d" } }),
    );
    expect(task.status).toBe("pending");
    const listed = (await (await fetch(`${t.url}/api/tasks`, { headers: u.auth })).json()) as { data: { id: string; title: string }[] };
    expect(listed.data).toEqual([expect.objectContaining({ id: task.id, title: "From an agent" })]);
    const message = structured<{ taskId: string; text: string }>(
      await client.callTool({ name: "add_task_message", arguments: { taskId: task.id, text: "hello" } }),
    );
    expect(message).toMatchObject({ taskId: task.id, text: "hello" });
    const read = structured<{ task: { id: string }; messages: { text: string }[] }>(
      await client.callTool({ name: "get_task", arguments: { taskId: task.id } }),
    );
    expect(read.messages.map((m) => m.text)).toEqual(["hello"]);
    // The text content carries the same data for clients that read only text.
    const listedByTool = await client.callTool({ name: "list_tasks", arguments: {} });
    expect(JSON.parse((listedByTool.content as { text: string }[])[0]?.text ?? "")).toEqual(listedByTool.structuredContent);
    await client.close();
  });

  it("refuses a write tool to a read-only token: HTTP 403 insufficient_scope with an MCP error, nothing written", async () => {
    const u = await t.user();
    const token = await accessToken(t, u.id, { scope: "mcp:read" });
    const res = await post(t, token, toolCall("create_task", { title: "no" }, 7));
    expect(res.status).toBe(403);
    expect(extractWWWAuthenticateParams(res)).toMatchObject({ error: "insufficient_scope", scope: "mcp:read mcp:write" });
    expect(await res.json()).toMatchObject({ jsonrpc: "2.0", id: 7, error: { code: -32000, message: "this needs the mcp:write scope" } });
    // The SDK client sees the same refusal.
    const client = await connectAgent(t, token);
    const refused = await client.callTool({ name: "create_task", arguments: { title: "no" } }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(StreamableHTTPError);
    expect((refused as StreamableHTTPError).code).toBe(403);
    await client.close();
    expect(await t.db.prisma.task.count({ where: { userId: u.id } })).toBe(0);
  });

  it("answers a refusal of the services as a tool error, and bad arguments as the SDK does", async () => {
    const u = await t.user();
    const other = await t.user();
    const client = await connectAgent(t, await accessToken(t, u.id));
    const theirs = (await (
      await fetch(`${t.url}/api/tasks`, {
        method: "POST",
        headers: { ...other.auth, "content-type": "application/json" },
        body: JSON.stringify({ title: "theirs" }),
      })
    ).json()) as { data: { id: string } };
    const result = await client.callTool({ name: "get_task", arguments: { taskId: theirs.data.id } });
    expect(result).toMatchObject({ isError: true, content: [{ type: "text", text: "not_found: task not found" }] });
    const bad = await client.callTool({ name: "create_task", arguments: { title: "" } }).catch((error: unknown) => error);
    expect(JSON.stringify(bad)).toMatch(/title/);
    await client.close();
  });
});
