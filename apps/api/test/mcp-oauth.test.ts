import { createHash } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { SecretBox } from "@app/secret-box";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sealContext } from "../src/services/mcp-servers.js";
import { startTestApi, type TestApi } from "./helpers.js";

/** A fake OAuth authorization server token endpoint that checks PKCE. */
async function fakeAuthServer(): Promise<{ url: string; server: Server; challenges: Map<string, string>; forms: URLSearchParams[] }> {
  const challenges = new Map<string, string>(); // code -> challenge
  const forms: URLSearchParams[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => {
      body += String(c);
    });
    req.on("end", () => {
      const form = new URLSearchParams(body);
      forms.push(form);
      const challenge = challenges.get(form.get("code") ?? "");
      const verifier = form.get("code_verifier") ?? "";
      const ok = challenge && createHash("sha256").update(verifier).digest("base64url") === challenge;
      res.writeHead(ok ? 200 : 400, { "content-type": "application/json" });
      res.end(
        JSON.stringify(
          ok
            ? { access_token: "at-secret-123", refresh_token: "rt-secret-456", expires_in: 3600, token_type: "Bearer" }
            : { error: "invalid_grant" },
        ),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, challenges, forms };
}

let t: TestApi;
let as: Awaited<ReturnType<typeof fakeAuthServer>>;
let clock = Date.now();
beforeAll(async () => {
  as = await fakeAuthServer();
  t = await startTestApi({ deps: { now: () => clock } });
});
afterAll(async () => {
  await t?.close();
  as?.server.close();
});

async function newServer(auth: Record<string, string>): Promise<string> {
  const res = await fetch(`${t.url}/api/mcp-servers`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({
      name: "Tools",
      url: "https://mcp.example/mcp",
      oauth: { authorizationUrl: `${as.url}/authorize`, tokenUrl: `${as.url}/token`, clientId: "client-1", scope: "tools" },
    }),
  });
  return ((await res.json()) as { data: { id: string } }).data.id;
}

const authorize = (serverId: string, headers: Record<string, string>) =>
  fetch(`${t.url}/api/mcp-oauth/authorize?serverId=${serverId}`, { headers, redirect: "manual" });

describe("GET /api/mcp-oauth/authorize (the cookie exception)", () => {
  it("answers 401 without a valid session cookie, even with a valid bearer", async () => {
    const u = await t.user();
    const serverId = await newServer(u.auth);
    expect((await authorize(serverId, {})).status).toBe(401);
    expect((await authorize(serverId, u.auth)).status).toBe(401);
    expect((await authorize(serverId, { cookie: "identity.session_token=forged.value" })).status).toBe(401);
    expect(t.stub.calls.getSession.every((c) => c.authorization === undefined)).toBe(true);
  });

  it("redirects a cookie-authenticated user to the authorization server with PKCE; 404 for another user's server", async () => {
    const u = await t.user();
    const other = await t.user();
    const serverId = await newServer(u.auth);
    const cookie = t.stub.addSession(u);
    const res = await authorize(serverId, { cookie });
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
    expect((await authorize(serverId, { cookie: t.stub.addSession(other) })).status).toBe(404);
  });
});

describe("MCP OAuth callback", () => {
  async function start(u: { auth: Record<string, string> } & { id: string; email: string; name: string }) {
    const serverId = await newServer(u.auth);
    const res = await authorize(serverId, { cookie: t.stub.addSession(u) });
    const location = new URL(res.headers.get("location") ?? "");
    const state = location.searchParams.get("state") ?? "";
    as.challenges.set("code-1", location.searchParams.get("code_challenge") ?? "");
    return { serverId, state };
  }
  const callback = (query: string) => fetch(`${t.url}/api/mcp-oauth/callback?${query}`, { redirect: "manual" });

  it("exchanges the code with the verifier, stores tokens encrypted, and the state is single use", async () => {
    const u = await t.user();
    const { serverId, state } = await start(u);
    const res = await callback(`code=code-1&state=${state}`);
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe(`${t.config.mcpReturnUrl}?mcp=connected&serverId=${serverId}`);
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
    expect((await callback(`code=code-1&state=${state}`)).status).toBe(400); // replay
    expect(await t.db.prisma.mcpOAuthState.count({ where: { serverId } })).toBe(0);
  });

  it("refuses an expired state, an unknown state, and a denied authorization", async () => {
    const u = await t.user();
    const expired = await start(u);
    clock += 11 * 60 * 1000;
    expect((await callback(`code=code-1&state=${expired.state}`)).status).toBe(400);
    clock = Date.now();
    expect((await callback("code=code-1&state=never-issued")).status).toBe(400);
    const denied = await start(u);
    expect((await callback(`error=access_denied&state=${denied.state}`)).status).toBe(400);
    const row = await t.db.prisma.mcpServer.findUniqueOrThrow({ where: { id: denied.serverId } });
    expect(row.accessToken).toBeNull();
  });
});
