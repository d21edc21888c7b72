import { randomUUID } from "node:crypto";
import type { AddressInfo } from "node:net";
import { createServer, type Server } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EXCHANGE_FAILED } from "../src/mcp/oauth.js";
import { callback, createMcpServer, type FakeAuthServer, fakeAuthServer, startFlow } from "./fixtures/oauth-server.js";
import { startTestApi, type TestApi } from "./helpers.js";

/** A TCP listener that counts connections (and answers nothing): proves no request was attempted. */
async function tcpCounter(): Promise<{ port: number; connections: () => number; server: Server }> {
  let count = 0;
  const server = createServer((socket) => {
    count += 1;
    socket.destroy();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { port: (server.address() as AddressInfo).port, connections: () => count, server };
}

/** Names the tests resolve by hand: each one points at this host. */
const resolveHost = async (hostname: string) => {
  if (hostname.endsWith(".test")) return [{ address: "127.0.0.1", family: 4 }];
  throw new Error(`ENOTFOUND ${hostname}`);
};

let strict: TestApi;
let dev: TestApi;
let as: FakeAuthServer;
let counter: Awaited<ReturnType<typeof tcpCounter>>;
beforeAll(async () => {
  as = await fakeAuthServer();
  counter = await tcpCounter();
  // `strict` is the production policy (https only, public addresses only); `dev` has the flag.
  strict = await startTestApi({ deps: { resolveHost } });
  dev = await startTestApi({ deps: { resolveHost }, env: { MCP_ALLOW_PRIVATE_URLS: "true" } });
});
afterAll(async () => {
  await strict?.close();
  await dev?.close();
  await as?.close();
  counter?.server.close();
});

/** Inserts an MCP server row directly (bypassing the save-time checks) for the user. */
async function rowWithTokenUrl(t: TestApi, userId: string, tokenUrl: string): Promise<string> {
  const id = randomUUID();
  await t.db.prisma.mcpServer.create({
    data: { id, userId, name: "s", url: "https://mcp.example", authorizationUrl: "https://as.example/authorize", tokenUrl, clientId: "c" },
  });
  return id;
}

describe("MCP OAuth endpoints: the outbound URL policy", () => {
  it("refuses http and private, loopback, link-local or credentialed endpoints when saved", async () => {
    const u = await strict.user();
    const good = { authorizationUrl: "https://as.example/authorize", tokenUrl: "https://as.example/token" };
    expect((await createMcpServer(strict, u.auth, good)).status).toBe(201);
    for (const [field, value] of [
      ["tokenUrl", "http://as.example/token"],
      ["tokenUrl", "https://169.254.169.254/latest/meta-data"],
      ["tokenUrl", "https://127.0.0.1:8443/token"],
      ["tokenUrl", "https://[::ffff:127.0.0.1]/token"],
      ["tokenUrl", "https://10.0.0.5/token"],
      ["tokenUrl", "https://192.168.1.1/token"],
      ["tokenUrl", "https://localhost/token"],
      ["tokenUrl", "https://user:pw@as.example/token"],
      ["authorizationUrl", "http://as.example/authorize"],
      ["authorizationUrl", "https://172.16.0.1/authorize"],
    ] as const) {
      const res = await createMcpServer(strict, u.auth, { ...good, [field]: value });
      expect(res.status, value).toBe(400);
      const body = (await res.json()) as { error: { code: string; issues: Array<{ path: string }> } };
      expect(body.error.code).toBe("validation_failed");
      expect(body.error.issues[0]?.path).toMatch(new RegExp(field));
    }
    const created = (await (await createMcpServer(strict, u.auth, good)).json()) as { data: { id: string } };
    const patch = await fetch(`${strict.url}/api/mcp-servers/${created.data.id}`, {
      method: "PATCH",
      headers: { ...u.auth, "content-type": "application/json" },
      body: JSON.stringify({ oauth: { ...good, clientId: "c", tokenUrl: "https://169.254.169.254/" } }),
    });
    expect(patch.status).toBe(400);
  });

  it("never connects to a token URL whose host resolves to a private address, and answers the generic 400", async () => {
    const u = await strict.user();
    for (const tokenUrl of [`https://internal.test:${counter.port}/token`, `http://127.0.0.1:${counter.port}/token`]) {
      const serverId = await rowWithTokenUrl(strict, u.id, tokenUrl);
      const flow = await startFlow(strict, u, serverId);
      const res = await callback(strict, `code=c&state=${flow.state}`, flow.nonceCookie);
      expect(res.status, tokenUrl).toBe(400);
      expect(await res.json()).toEqual({ ok: false, error: { code: "bad_request", message: EXCHANGE_FAILED } });
    }
    expect(counter.connections()).toBe(0);
  });

  it("answers every failed exchange the same way, so the status reveals nothing about the target", async () => {
    const u = await dev.user();
    const answers = [
      { status: 500, body: JSON.stringify({ error: "server_error" }) },
      { status: 400, body: JSON.stringify({ error: "invalid_grant" }) },
      { status: 302, body: "", headers: { location: "http://169.254.169.254/" } },
      { status: 200, body: JSON.stringify({ access_token: "a", pad: "x".repeat(70 * 1024) }) },
      { status: 200, body: "<html>not json</html>" },
      { status: 200, body: JSON.stringify({ token_type: "Bearer" }) },
    ];
    const closed = await tcpCounter();
    closed.server.close();
    const targets: Array<{ tokenUrl: string; answer?: (typeof answers)[number] }> = [
      { tokenUrl: `http://127.0.0.1:${closed.port}/token` },
      ...answers.map((answer) => ({ tokenUrl: `${as.url}/token`, answer })),
    ];
    const seen = new Set<string>();
    for (const { tokenUrl, answer } of targets) {
      as.answer = answer;
      const serverId = await rowWithTokenUrl(dev, u.id, tokenUrl);
      const flow = await startFlow(dev, u, serverId);
      const res = await callback(dev, `code=c&state=${flow.state}`, flow.nonceCookie);
      seen.add(`${res.status} ${await res.text()}`);
      const row = await dev.db.prisma.mcpServer.findUniqueOrThrow({ where: { id: serverId } });
      expect(row.accessToken).toBeNull();
    }
    as.answer = undefined;
    expect([...seen]).toEqual([`400 ${JSON.stringify({ ok: false, error: { code: "bad_request", message: EXCHANGE_FAILED } })}`]);
  });

  it("connects to the address it checked (the name is resolved once, by the policy)", async () => {
    const u = await dev.user();
    // "as.test" has no DNS answer outside the policy's resolver: only the pinned address can work.
    const port = new URL(as.url).port;
    const serverId = await rowWithTokenUrl(dev, u.id, `http://as.test:${port}/token`);
    const flow = await startFlow(dev, u, serverId);
    as.challenges.set("pinned-code", flow.challenge);
    const res = await callback(dev, `code=pinned-code&state=${flow.state}`, flow.nonceCookie);
    expect(res.status).toBe(302);
  });
});
