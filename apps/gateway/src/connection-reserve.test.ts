import type { Server } from "node:http";
import net from "node:net";
import { EDGE_LIMITS, type ServerLimits } from "@app/http-kit";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { createGateway } from "./gateway.js";

// Small caps with the edge's proportions: 4 addresses at their per-address cap would fill the
// whole server. The reserve is a quarter of the total (64); a light share is 1/32 of the
// per-address cap (2). packages/http-kit/src/serve.ts (connectionReserve).
const LIMITS: ServerLimits = { ...EDGE_LIMITS, maxConnections: 256, maxConnectionsPerIp: 64, keepAliveTimeoutMs: 60_000 };
const HEALTH = "GET /healthz HTTP/1.1\r\nhost: localhost\r\n\r\n";

const servers: Server[] = [];
const sockets: net.Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
});

async function gateway(): Promise<number> {
  const unused = "http://127.0.0.1:9"; // /healthz is answered by the gateway itself
  const server = createGateway({ identity: [unused], api: [unused], logger: pino({ level: "silent" }), limits: LIMITS });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return (server.address() as net.AddressInfo).port;
}

type Outcome = "served" | "refused" | "dropped";

/**
 * One keep-alive connection from `localAddress` asking for /healthz: "served" once its 200 arrived
 * (the connection then stays open, held), "refused" on the cap's 503, "dropped" when the server
 * closed it without a word (Node's total cap).
 */
function hold(port: number, localAddress: string): Promise<Outcome> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: "127.0.0.1", localAddress });
    sockets.push(socket);
    let received = "";
    socket.on("error", () => undefined);
    socket.on("data", (chunk: Buffer) => {
      received += chunk.toString();
      if (/^HTTP\/1\.1 200 /.test(received)) resolve("served");
      if (/^HTTP\/1\.1 503 [\s\S]*connection: close/.test(received)) resolve("refused");
    });
    socket.on("close", () => resolve(received.startsWith("HTTP/1.1 503") ? "refused" : "dropped"));
    socket.write(HEALTH);
  });
}

async function holdMany(port: number, localAddress: string, count: number): Promise<Outcome[]> {
  return Promise.all(Array.from({ length: count }, () => hold(port, localAddress)));
}

const tally = (outcomes: Outcome[], what: Outcome) => outcomes.filter((o) => o === what).length;

describe("the gateway's connection reserve", () => {
  it("keeps the last quarter of its connections for light addresses when heavy ones reach the total cap", async () => {
    const port = await gateway();
    const heavy: Outcome[] = [];
    for (let a = 1; a <= 4; a += 1) heavy.push(...(await holdMany(port, `127.0.30.${a}`, LIMITS.maxConnectionsPerIp)));
    // Three addresses fill three quarters of the server; the fourth, still light then, gets its
    // light share; the rest of their connections get the 503.
    expect(tally(heavy, "served")).toBe(3 * 64 + 2);
    expect(tally(heavy, "refused")).toBe(62);

    // A light address still gets in, up to its light share while the server is in its reserve.
    expect(await holdMany(port, "127.0.31.1", 2)).toEqual(["served", "served"]);
    expect(await hold(port, "127.0.31.1")).toBe("refused");
    // Other light addresses too, until the reserve itself is full.
    const light: Outcome[] = [];
    for (let a = 2; a <= 40; a += 1) light.push(...(await holdMany(port, `127.0.31.${a}`, 2)));
    expect(tally(light, "served")).toBe(256 - 196);
  }, 30_000);

  it("admits an address up to its per-address cap while the server is below its reserve", async () => {
    const port = await gateway();
    const outcomes = await holdMany(port, "127.0.32.1", LIMITS.maxConnectionsPerIp + 1);
    expect(tally(outcomes, "served")).toBe(LIMITS.maxConnectionsPerIp);
    expect(tally(outcomes, "refused")).toBe(1);
  });
});
