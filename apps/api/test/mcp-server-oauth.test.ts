// End to end with the real authorization server: identity, the API and the gateway started by the
// launcher on one base URL, and the official MCP SDK client with an OAuthClientProvider that knows
// nothing but `{base_url}/api/mcp`. It discovers the authorization server, registers, sends the
// user's browser (the test's cookie jar) to sign in and consent as the web app's pages do, trades
// the code with PKCE, calls tools, refreshes an expired token, and after a revocation authorizes
// again.
import { randomUUID } from "node:crypto";
import { type OAuthClientProvider, UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Browser } from "./fixtures/browser.js";
import { type StackProcess, stackBuilt, startStack } from "./fixtures/stack.js";
import { eventually } from "./helpers.js";

/** Where the client's browser lands with the code: never fetched, the test reads the URL. */
const REDIRECT_URI = "http://127.0.0.1:9/callback";
/** Access tokens live this long here, so a refresh happens within the test. */
const ACCESS_TOKEN_TTL_S = 2;

/** An MCP client's OAuth state, in memory, as a desktop assistant keeps it. */
class AgentAuth implements OAuthClientProvider {
  information: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = "";
  /** Where the client sent the user's browser last. */
  authorizationUrl: URL | undefined;
  readonly redirectUrl = REDIRECT_URI;
  readonly clientMetadata: OAuthClientMetadata = {
    client_name: "E2E agent",
    redirect_uris: [REDIRECT_URI],
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    token_endpoint_auth_method: "none",
  };
  clientInformation = () => this.information;
  saveClientInformation = (information: OAuthClientInformationMixed) => {
    this.information = information;
  };
  tokens = () => this.saved;
  saveTokens = (tokens: OAuthTokens) => {
    this.saved = tokens;
  };
  redirectToAuthorization = (url: URL) => {
    this.authorizationUrl = url;
  };
  saveCodeVerifier = (verifier: string) => {
    this.verifier = verifier;
  };
  codeVerifier = () => this.verifier;
  /** What the SDK drops when the authorization server refuses it (a revoked refresh token: the tokens). */
  invalidateCredentials = (what: "all" | "client" | "tokens" | "verifier" | "discovery") => {
    if (what === "all" || what === "tokens") this.saved = undefined;
    if (what === "all" || what === "client") this.information = undefined;
    if (what === "all" || what === "verifier") this.verifier = "";
  };
}

let stack: StackProcess;
beforeAll(async () => {
  if (!stackBuilt()) throw new Error("the stack is not built: run `pnpm turbo run build --filter=@app/stack...` first");
  stack = await startStack({ OAUTH_ACCESS_TOKEN_TTL: String(ACCESS_TOKEN_TTL_S) });
}, 120_000);
afterAll(async () => {
  await stack?.stop();
}, 60_000);

/** A user of the web app: signs up in the browser (identity's session cookie lands in its jar). */
async function signUp(browser: Browser, webOrigin: string): Promise<{ id: string }> {
  const res = await browser.request(`${stack.baseUrl}/api/auth/sign-up/email`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: webOrigin },
    body: JSON.stringify({ email: `agent-${randomUUID()}@example.com`, password: "correct horse battery", name: "Agent User" }),
  });
  expect(res.status, await res.clone().text()).toBe(200);
  return ((await res.json()) as { user: { id: string } }).user;
}

/**
 * The user's side of an authorization: from the client's authorization URL through sign-in (when
 * the browser has no session yet) and the consent page (when shown: its decision posted as the
 * page posts it) to the client's redirect URI; answers the code.
 */
async function approve(browser: Browser, from: URL, decision: { scope?: string } = {}): Promise<{ code: string; consented: boolean }> {
  const stop = (url: URL) => url.href.startsWith(REDIRECT_URI) || url.origin !== new URL(stack.baseUrl).origin;
  let at = await browser.follow(from, stop);
  if (at.pathname === "/sign-in") {
    await signUp(browser, at.origin);
    at = await browser.follow(at.searchParams.get("callbackURL") ?? "", stop);
  }
  let consented = false;
  if (at.pathname === "/oauth/consent") {
    consented = true;
    const res = await browser.request(`${stack.baseUrl}/api/auth/oauth2/consent`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: at.origin },
      body: JSON.stringify({ accept: true, ...decision, oauth_query: at.search.slice(1) }),
    });
    const body = (await res.json()) as { redirect_uri: string };
    expect(res.status, JSON.stringify(body)).toBe(200);
    at = await browser.follow(body.redirect_uri, stop);
  }
  expect(at.href.startsWith(REDIRECT_URI), at.href).toBe(true);
  return { code: at.searchParams.get("code") ?? "", consented };
}

/** The SDK's client on `{base_url}/api/mcp` with `auth`; connects (throws UnauthorizedError when it must authorize first). */
async function connect(auth: AgentAuth): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(new URL(`${stack.baseUrl}/api/mcp`), { authProvider: auth });
  const client = new Client({ name: "e2e-agent", version: "1.0.0" });
  await client.connect(transport);
  return { client, transport };
}

/** Connects, authorizing first when the client has to (the browser approves); answers the connected client. */
async function authorizeAndConnect(auth: AgentAuth, browser: Browser, decision: { scope?: string } = {}) {
  const first = await connect(auth).catch((error: unknown) => error);
  if (!(first instanceof UnauthorizedError)) return { ...(first as Awaited<ReturnType<typeof connect>>), consented: false };
  const { code, consented } = await approve(browser, auth.authorizationUrl as URL, decision);
  const pending = new StreamableHTTPClientTransport(new URL(`${stack.baseUrl}/api/mcp`), { authProvider: auth });
  await pending.finishAuth(code);
  return { ...(await connect(auth)), consented };
}

/** Waits until the API refuses `token` for its age (a message that is no tool call, so no rate is spent). */
async function expired(token: string): Promise<void> {
  const initialize = {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "probe", version: "1" } },
  };
  await eventually(async () => {
    const res = await fetch(`${stack.baseUrl}/api/mcp`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify(initialize),
    });
    await res.body?.cancel();
    return res.status === 401 && (res.headers.get("www-authenticate") ?? "").includes("The token has expired");
  }, 30_000);
}

/** A get-session JWT of the browser's user, as the web app gets one. */
async function sessionJwt(browser: Browser): Promise<string> {
  const res = await browser.request(`${stack.baseUrl}/api/auth/get-session`);
  const jwt = res.headers.get("set-auth-jwt");
  expect(res.status).toBe(200);
  return jwt ?? "";
}

describe("an MCP client with nothing but the server URL", () => {
  it("discovers, registers, authorizes with PKCE, calls tools, refreshes an expired token, and authorizes again after a revocation", async () => {
    const auth = new AgentAuth();
    const browser = new Browser();
    const { client, consented } = await authorizeAndConnect(auth, browser);
    expect(consented).toBe(true);
    // What the SDK found and asked for, from the 401 challenge and the two metadata documents.
    const asked = auth.authorizationUrl as URL;
    expect(asked.origin + asked.pathname).toBe(`${stack.baseUrl}/api/auth/oauth2/authorize`);
    expect(
      Object.fromEntries(["resource", "scope", "code_challenge_method", "client_id"].map((k) => [k, asked.searchParams.get(k)])),
    ).toEqual({
      resource: `${stack.baseUrl}/api/mcp`,
      scope: "mcp:read mcp:write",
      code_challenge_method: "S256",
      client_id: auth.information?.client_id,
    });
    expect(auth.saved?.refresh_token).toEqual(expect.any(String));

    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([
      "add_task_message",
      "create_task",
      "get_task",
      "list_chats",
      "list_projects",
      "list_tasks",
      "search",
    ]);
    const created = await client.callTool({ name: "create_task", arguments: { title: "Filed by an agent" } });
    const task = created.structuredContent as { id: string };
    // The same user sees it through the REST API with the web app's JWT; the access token opens no REST route.
    const jwt = await sessionJwt(browser);
    const listed = (await (await fetch(`${stack.baseUrl}/api/tasks`, { headers: { authorization: `Bearer ${jwt}` } })).json()) as {
      data: { id: string }[];
    };
    expect(listed.data.map((t) => t.id)).toEqual([task.id]);
    const accessToken = auth.saved?.access_token ?? "";
    expect((await fetch(`${stack.baseUrl}/api/tasks`, { headers: { authorization: `Bearer ${accessToken}` } })).status).toBe(401);
    expect((await fetch(`${stack.baseUrl}/api/mcp`, { method: "POST", headers: { authorization: `Bearer ${jwt}` } })).status).toBe(401);

    // The access token expires: the next call gets 401, and the SDK refreshes (a new refresh token too) and retries.
    const before = { access: accessToken, refresh: auth.saved?.refresh_token };
    await expired(accessToken);
    const afterRefresh = await client.callTool({ name: "get_task", arguments: { taskId: task.id } });
    expect(afterRefresh.isError).toBeFalsy();
    expect(auth.saved?.access_token).not.toBe(before.access);
    expect(auth.saved?.refresh_token).not.toBe(before.refresh);

    // Revoked: the refresh token stops working, so once the access token expires the client must authorize again.
    const revoked = await fetch(`${stack.baseUrl}/api/auth/oauth2/revoke`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: auth.saved?.refresh_token ?? "", client_id: auth.information?.client_id ?? "" }).toString(),
    });
    expect(revoked.status).toBe(200);
    auth.authorizationUrl = undefined;
    await expired(auth.saved?.access_token ?? "");
    const refused = await client.callTool({ name: "list_tasks", arguments: {} }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(UnauthorizedError);
    expect(auth.authorizationUrl).toBeDefined();
    await client.close();

    // Reconnect: the user is still signed in (the consent page shows again or not, as the authorization server decides).
    const again = await authorizeAndConnect(auth, browser);
    expect(auth.saved?.access_token).not.toBe(before.access);
    const read = await again.client.callTool({ name: "get_task", arguments: { taskId: task.id } });
    expect((read.structuredContent as { task: { title: string } }).task.title).toBe("Filed by an agent");
    await again.client.close();
  }, 120_000);

  it("gets only the read tools when the user grants mcp:read alone, and a write call is refused with 403 insufficient_scope", async () => {
    const auth = new AgentAuth();
    const { client } = await authorizeAndConnect(auth, new Browser(), { scope: "mcp:read" });
    expect(auth.saved?.scope?.split(" ")).not.toContain("mcp:write");
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(["get_task", "list_chats", "list_projects", "list_tasks", "search"]);
    const res = await fetch(`${stack.baseUrl}/api/mcp`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${auth.saved?.access_token}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "create_task", arguments: { title: "x" } } }),
    });
    expect(res.status).toBe(403);
    expect(res.headers.get("www-authenticate")).toContain('error="insufficient_scope"');
    await client.close();
  }, 60_000);
});
