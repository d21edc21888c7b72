import { type ChildProcess, spawn } from "node:child_process";
import http, { type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { politeDrain } from "@app/http-kit";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket, WebSocketServer } from "ws";
import { createGateway } from "./gateway.js";

/** The built gateway (run `pnpm turbo run build --filter=@app/gateway...` first). */
const ENTRY = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../dist/server.js");
const silent = pino({ level: "silent" });
const cleanup: Array<() => void> = [];
afterEach(() => {
  for (const fn of cleanup.splice(0)) fn();
});

function listen(server: Server, port = 0): Promise<number> {
  return new Promise((resolve) => server.listen(port, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)));
}

/**
 * An upstream like the API: an SSE stream and a WebSocket that stay open until `goodbye()`,
 * which sends the stream a final `shutdown` event and closes the sockets with 1001.
 */
async function upstream() {
  const streams = new Set<ServerResponse>();
  const server = http.createServer((_req: IncomingMessage, res) => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.write("data: hello\n\n");
    streams.add(res);
  });
  const wss = new WebSocketServer({ server });
  wss.on("connection", (socket) => socket.send("hello"));
  const port = await listen(server);
  cleanup.push(() => {
    server.closeAllConnections();
    server.close();
  });
  return {
    url: `http://127.0.0.1:${port}`,
    goodbye() {
      for (const res of streams) res.end('event: shutdown\ndata: {"reason":"server shutting down"}\n\n');
      for (const socket of wss.clients) socket.close(1001, "server shutting down");
    },
  };
}

/** An SSE client and a WebSocket client through the gateway at `port`, each past its first message. */
async function clients(port: number) {
  let text = "";
  const sseEnded = new Promise<string>((resolve, reject) => {
    http
      .get({ port, host: "127.0.0.1", path: "/api/tasks/t/stream" }, (res) => {
        res.on("data", (c: Buffer) => {
          text += c.toString();
        });
        res.on("end", () => resolve(text));
        res.on("error", () => resolve(`${text}[reset]`));
      })
      .on("error", reject);
  });
  const ws = new WebSocket(`ws://127.0.0.1:${port}/api/ws`);
  const wsClosed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on("close", (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  ws.on("error", () => undefined);
  await new Promise<void>((resolve) => ws.once("message", () => resolve()));
  while (!text.includes("hello")) await new Promise((r) => setTimeout(r, 10));
  return { sseEnded, wsClosed };
}

const refused = (port: number) =>
  fetch(`http://127.0.0.1:${port}/healthz`).then(
    () => false,
    (error: Error & { cause?: { code?: string } }) => error.cause?.code === "ECONNREFUSED",
  );

describe("polite drain", () => {
  it("stops accepting, relays the upstream's final SSE event and 1001 close, then resolves", async () => {
    const up = await upstream();
    const gateway = createGateway({ identity: [up.url], api: [up.url], logger: silent });
    const drain = politeDrain(gateway, silent);
    const port = await listen(gateway);
    cleanup.push(() => gateway.closeAllConnections());
    const { sseEnded, wsClosed } = await clients(port);

    const drained = drain.drain(10_000);
    expect(await refused(port)).toBe(true);
    await new Promise((r) => setTimeout(r, 200)); // still open while draining
    up.goodbye();
    expect(await sseEnded).toMatch(/event: shutdown\ndata: \{"reason":"server shutting down"\}\n\n$/);
    expect(await wsClosed).toEqual({ code: 1001, reason: "server shutting down" });
    expect(await drained).toBe("drained");
  });

  it("closes what is still open at the deadline", async () => {
    const up = await upstream();
    const gateway = createGateway({ identity: [up.url], api: [up.url], logger: silent });
    const drain = politeDrain(gateway, silent);
    const port = await listen(gateway);
    const { sseEnded, wsClosed } = await clients(port);
    expect(await drain.drain(300)).toBe("deadline");
    expect(await sseEnded).not.toContain("shutdown");
    expect((await wsClosed).code).toBe(1006);
  });
});

/** A free port: the launcher gives the gateway a fixed one. */
async function freePort(): Promise<number> {
  const probe = http.createServer();
  const port = await listen(probe);
  await new Promise((r) => probe.close(r));
  return port;
}

describe("gateway process on SIGTERM", () => {
  it("keeps relaying open streams past 5 s until the upstream ends them, then exits 0", async () => {
    const up = await upstream();
    const port = await freePort();
    const child: ChildProcess = spawn(process.execPath, [ENTRY], {
      env: {
        PATH: process.env.PATH,
        PORT: String(port),
        IDENTITY_UPSTREAMS: up.url,
        API_UPSTREAMS: up.url,
        SHUTDOWN_DRAIN_MS: "15000",
        LOG_FORMAT: "json",
      },
      stdio: ["ignore", "pipe", "inherit"],
    });
    cleanup.push(() => child.kill("SIGKILL"));
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    await new Promise<void>((resolve) => child.stdout?.on("data", (c: Buffer) => c.toString().includes('"listening"') && resolve()));
    const { sseEnded, wsClosed } = await clients(port);

    child.kill("SIGTERM");
    await new Promise((r) => setTimeout(r, 5_500)); // an upstream whose own drain takes a while
    up.goodbye();
    expect(await sseEnded).toContain("event: shutdown");
    expect(await wsClosed).toEqual({ code: 1001, reason: "server shutting down" });
    expect(await exited).toBe(0);
  }, 20_000);
});
