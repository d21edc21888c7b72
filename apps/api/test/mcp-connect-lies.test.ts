import { randomUUID } from "node:crypto";
import { type AddressInfo, createServer, type Server } from "node:net";
import { OutboundUrlPolicy } from "@app/http-kit/outbound";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkMetadata } from "../src/mcp/discovery.js";
import { type McpServerFixture, startMcpServer } from "./fixtures/mcp-server.js";
import { authorize } from "./fixtures/oauth-server.js";
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

const resolveHost = async (hostname: string) => {
  if (hostname.endsWith(".test")) return [{ address: "127.0.0.1", family: 4 }];
  throw new Error(`ENOTFOUND ${hostname}`);
};

let dev: TestApi;
let strict: TestApi;
let liar: McpServerFixture;
let counter: Awaited<ReturnType<typeof tcpCounter>>;
beforeAll(async () => {
  liar = await startMcpServer({ metadataLies: { issuer: "https://as.example/" } });
  counter = await tcpCounter();
  dev = await startTestApi({ env: { MCP_ALLOW_PRIVATE_URLS: "true" } });
  strict = await startTestApi({ deps: { resolveHost } });
});
afterAll(async () => {
  await dev?.close();
  await strict?.close();
  await liar?.close();
  counter?.server.close();
});

async function addRow(t: TestApi, userId: string, url: string): Promise<string> {
  const id = randomUUID();
  await t.db.prisma.mcpServer.create({ data: { id, userId, name: "s", url } });
  return id;
}

describe("MCP servers that lie or point inward", () => {
  it("refuses authorization server metadata whose issuer is not the server it came from (back to the web app with the code, nothing registered)", async () => {
    const u = await dev.user();
    const serverId = await addRow(dev, u.id, liar.url);
    const res = await authorize(dev, serverId, { cookie: dev.stub.addSession(u) });
    // A navigation: the browser goes back to the web app with the code.
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe(`${dev.config.mcpReturnUrl}?mcp=error&serverId=${serverId}&code=mcp_upstream_invalid`);
    expect(liar.provider.counts.registrations).toBe(0);
    expect(await dev.db.prisma.mcpOAuthState.count({ where: { serverId } })).toBe(0);
  });

  it("without the development flag, refuses a local server when saved and never connects to one resolved by DNS", async () => {
    const u = await strict.user();
    const saved = await fetch(`${strict.url}/api/mcp-servers`, {
      method: "POST",
      headers: { ...u.auth, "content-type": "application/json" },
      body: JSON.stringify({ name: "local", url: `http://127.0.0.1:${counter.port}/mcp` }),
    });
    expect(saved.status).toBe(400);
    for (const url of [`https://mcp.test:${counter.port}/mcp`, `http://127.0.0.1:${counter.port}/mcp`]) {
      const serverId = await addRow(strict, u.id, url);
      const res = await authorize(strict, serverId, { cookie: strict.stub.addSession(u) });
      expect(res.status, url).toBe(302);
      expect(new URL(res.headers.get("location") ?? "").searchParams.get("code")).toBe("mcp_upstream_invalid");
    }
    expect(counter.connections()).toBe(0);
  });

  it("refuses metadata whose endpoints are private, loopback or link-local addresses (production policy)", () => {
    const policy = new OutboundUrlPolicy({ allowPrivate: false });
    const honest = {
      issuer: "https://as.example",
      authorization_endpoint: "https://as.example/authorize",
      token_endpoint: "https://as.example/token",
      registration_endpoint: "https://as.example/register",
      response_types_supported: ["code"],
    };
    expect(() => checkMetadata("https://as.example/", honest, policy)).not.toThrow();
    for (const [field, value] of [
      ["authorization_endpoint", "https://10.0.0.5/authorize"],
      ["token_endpoint", "https://169.254.169.254/latest/meta-data"],
      ["token_endpoint", "http://as.example/token"],
      ["registration_endpoint", "https://localhost/register"],
      ["revocation_endpoint", "https://[::1]/revoke"],
    ] as const) {
      expect(() => checkMetadata("https://as.example", { ...honest, [field]: value }, policy), value).toThrow(
        expect.objectContaining({ code: "mcp_upstream_invalid", status: 502 }),
      );
    }
  });
});
