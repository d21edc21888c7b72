import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type McpServerFixture, startMcpServer } from "./fixtures/mcp-server.js";
import { callback } from "./fixtures/oauth-server.js";
import { startTestApi, type TestApi } from "./helpers.js";

// What `MCP_SAMPLE=true pnpm start` gives the API (tools/stack/src/mcp-sample.ts): the sample's own
// origin through the outbound policy, and no other private or loopback address.
let t: TestApi;
let sample: McpServerFixture;
let other: McpServerFixture;
beforeAll(async () => {
  sample = await startMcpServer();
  other = await startMcpServer();
  t = await startTestApi({ env: { MCP_ALLOW_PRIVATE_ORIGINS: new URL(sample.url).origin } });
});
afterAll(async () => {
  await t?.close();
  await sample?.close();
  await other?.close();
});

type User = Awaited<ReturnType<TestApi["user"]>>;

async function add(u: User, url: string): Promise<Response> {
  return fetch(`${t.url}/api/mcp-servers`, {
    method: "POST",
    headers: { ...u.auth, "content-type": "application/json" },
    body: JSON.stringify({ name: "Sample", url }),
  });
}

describe("MCP_ALLOW_PRIVATE_ORIGINS (the sample MCP server of pnpm start)", () => {
  it("connects to the named origin over http on 127.0.0.1 and calls a tool", async () => {
    const u = await t.user();
    const created = await add(u, sample.url);
    expect(created.status).toBe(201);
    const serverId = ((await created.json()) as { data: { id: string } }).data.id;
    const start = await fetch(`${t.url}/api/mcp-oauth/authorize?serverId=${serverId}`, {
      headers: { cookie: t.stub.addSession(u) },
      redirect: "manual",
    });
    expect(start.status).toBe(302);
    const nonce = (start.headers.getSetCookie().find((c) => c.startsWith("mcp_oauth_nonce=")) ?? "").split(";")[0];
    const approved = await fetch(start.headers.get("location") ?? "", { redirect: "manual" });
    const back = new URL(approved.headers.get("location") ?? "");
    expect((await callback(t, back.searchParams.toString(), nonce)).status).toBe(302);
    const call = await fetch(`${t.url}/api/mcp-servers/${serverId}/tools/add/call`, {
      method: "POST",
      headers: { ...u.auth, "content-type": "application/json" },
      body: JSON.stringify({ arguments: { a: 2, b: 3 } }),
    });
    expect(call.status).toBe(200);
  });

  it("refuses every other private or loopback address: another port, the metadata address, a private network", async () => {
    const u = await t.user();
    for (const url of [other.url, "http://169.254.169.254/latest/meta-data/", "http://10.0.0.1/mcp", "https://127.0.0.1/mcp"]) {
      const res = await add(u, url);
      expect(res.status, url).toBe(400);
      expect(await res.json()).toMatchObject({ ok: false, error: { code: "validation_failed" } });
    }
    expect(other.calls).toEqual([]);
  });
});
