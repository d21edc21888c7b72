import { createHash, randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type McpServerFixture, startMcpServer } from "./sample-server.js";

// The sample's tokens are audience-bound (RFC 8707): a token its authorization server issued for
// another resource is refused by its MCP endpoint, as a real resource server must.
let sample: McpServerFixture;
beforeAll(async () => {
  sample = await startMcpServer();
});
afterAll(async () => {
  await sample?.close();
});

const REDIRECT = "http://127.0.0.1:9/callback";

/** Registers a public client, authorizes with PKCE for `resource` (or none) and exchanges the code. */
async function tokenFor(resource: string | undefined): Promise<string> {
  const origin = new URL(sample.url).origin;
  const registered = await fetch(`${origin}/register`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ redirect_uris: [REDIRECT], token_endpoint_auth_method: "none", client_name: "audience test" }),
  });
  expect(registered.status).toBe(201);
  const { client_id } = (await registered.json()) as { client_id: string };
  const verifier = randomBytes(32).toString("base64url");
  const authorize = new URL(`${origin}/authorize`);
  authorize.search = new URLSearchParams({
    response_type: "code",
    client_id,
    redirect_uri: REDIRECT,
    code_challenge: createHash("sha256").update(verifier).digest("base64url"),
    code_challenge_method: "S256",
    state: "s",
    ...(resource ? { resource } : {}),
  }).toString();
  const approved = await fetch(authorize, { redirect: "manual" });
  expect(approved.status).toBe(302);
  const code = new URL(approved.headers.get("location") ?? "").searchParams.get("code") ?? "";
  const token = await fetch(`${origin}/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "authorization_code",
      code,
      code_verifier: verifier,
      redirect_uri: REDIRECT,
      client_id,
      ...(resource ? { resource } : {}),
    }),
  });
  expect(token.status).toBe(200);
  return ((await token.json()) as { access_token: string }).access_token;
}

function listTools(token: string): Promise<Response> {
  return fetch(sample.url, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
  });
}

describe("the sample MCP server's audience check", () => {
  it("serves a token issued for its own resource", async () => {
    const res = await listTools(await tokenFor(sample.url));
    expect(res.status).toBe(200);
  });

  it("serves a token issued without a resource indicator (the authorization server's one resource)", async () => {
    expect((await listTools(await tokenFor(undefined))).status).toBe(200);
  });

  it("refuses a token issued for another resource with 401 invalid_token", async () => {
    const res = await listTools(await tokenFor("https://other.example/mcp"));
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toMatch(/error="invalid_token"/);
    expect(sample.calls).toEqual([]);
  });
});
