import type { Server } from "node:http";
import net, { type AddressInfo } from "node:net";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { createGateway } from "./gateway.js";

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
});

/** Sends a WebSocket upgrade for `path` on a raw socket and returns everything the gateway wrote. */
async function upgrade(path: string): Promise<string> {
  // No upstream is reached: the refusal is the gateway's own.
  const server = createGateway({ identity: ["http://127.0.0.1:9"], api: ["http://127.0.0.1:9"], logger: pino({ level: "silent" }) });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const socket = net.connect((server.address() as AddressInfo).port, "127.0.0.1");
  let received = "";
  socket.on("data", (c: Buffer) => {
    received += c.toString();
  });
  socket.write(
    `GET ${path} HTTP/1.1\r\nhost: x\r\nconnection: upgrade\r\nupgrade: websocket\r\n` +
      "sec-websocket-version: 13\r\nsec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n",
  );
  await new Promise((r) => socket.once("close", r));
  return received;
}

describe("the gateway's upgrade refusals", () => {
  it("answers an upgrade for a path it does not route with the contract's 404 envelope", async () => {
    const raw = await upgrade("/elsewhere/ws");
    const [head = "", body = ""] = raw.split("\r\n\r\n");
    expect(head).toMatch(/^HTTP\/1\.1 404 Not Found\r\n/);
    expect(head).toMatch(/\r\ncontent-type: application\/json; charset=utf-8\r\n/i);
    expect(head).toMatch(/\r\nconnection: close(\r\n|$)/i);
    expect(JSON.parse(body)).toEqual({ ok: false, error: { code: "not_found", message: "no route for GET /elsewhere/ws" } });
  });

  it("answers an upgrade for an ambiguous path alike", async () => {
    const raw = await upgrade("/api/%2e%2e/ws");
    expect(raw).toMatch(/^HTTP\/1\.1 404 /);
    expect(JSON.parse(raw.split("\r\n\r\n")[1] ?? "")).toMatchObject({ ok: false, error: { code: "not_found" } });
  });
});
