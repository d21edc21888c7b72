import { spawn } from "node:child_process";
import http, { type Server } from "node:http";
import net from "node:net";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it, vi } from "vitest";
import { addressKey, limitConnections, serverOptions } from "./connections.js";
import { loadServerLimits, SERVICE_LIMITS, type ServerLimits } from "./settings/server.js";

const servers: Server[] = [];
const sockets: net.Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
});

/** A server with `limits` whose handler streams for `streamMs` on /stream and answers "ok" otherwise. */
async function start(overrides: Partial<ServerLimits>): Promise<number> {
  const limits = { ...SERVICE_LIMITS, ...overrides };
  const server = http.createServer(serverOptions(limits), (req, res) => {
    if (req.url === "/stream") {
      res.writeHead(200, { "content-type": "text/event-stream" });
      let n = 0;
      const timer = setInterval(() => {
        n += 1;
        res.write(`data: ${n}\n\n`);
        if (n === 6) {
          clearInterval(timer);
          res.end();
        }
      }, 200);
      return;
    }
    req.resume();
    req.on("end", () => res.end("ok"));
  });
  // An upgraded connection that echoes what it receives (a WebSocket stands in for this).
  server.on("upgrade", (_req, socket: net.Socket) => {
    socket.write("HTTP/1.1 101 Switching Protocols\r\nconnection: upgrade\r\nupgrade: echo\r\n\r\n");
    socket.on("data", (d: Buffer) => socket.write(d));
    socket.on("end", () => socket.end());
  });
  limitConnections(server, limits);
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return (server.address() as net.AddressInfo).port;
}

/** A connection that sends `data` and keeps the socket open; records what comes back and when it closes. */
function open(port: number, data: string, localAddress = "127.0.0.1") {
  const socket = net.connect({ port, host: "127.0.0.1", localAddress });
  sockets.push(socket);
  let received = "";
  socket.on("data", (c: Buffer) => {
    received += c.toString();
  });
  socket.on("error", () => undefined);
  const connected = new Promise<void>((r) => socket.once("connect", () => r()));
  const closed = new Promise<void>((r) => socket.once("close", () => r()));
  socket.write(data);
  return { socket, connected, closed, received: () => received };
}

const HALF = "GET / HTTP/1.1\r\nhost: x\r\nx-slow: ";
const within = <T>(p: Promise<T>, ms: number) =>
  Promise.race([p.then(() => true), new Promise<false>((r) => setTimeout(() => r(false), ms))]);

describe("server limits", () => {
  it("closes a connection whose request head does not arrive within the head timeout, with a 408", async () => {
    const port = await start({ headersTimeoutMs: 300, requestTimeoutMs: 1_000 });
    const half = open(port, HALF);
    expect(await within(half.closed, 5_000)).toBe(true);
    expect(half.received()).toMatch(/^HTTP\/1\.1 408 /);
  });

  it("does not cut a streamed response at the request timeout", async () => {
    const port = await start({ headersTimeoutMs: 200, requestTimeoutMs: 400 });
    const body = await new Promise<string>((resolve, reject) => {
      http
        .get({ port, host: "127.0.0.1", path: "/stream" }, (res) => {
          let text = "";
          res.on("data", (c: Buffer) => {
            text += c.toString();
          });
          res.on("end", () => resolve(text));
          res.on("error", reject);
        })
        .on("error", reject);
    });
    expect(body.match(/data: \d+/g)).toHaveLength(6); // 1.2 s of stream, past the 0.4 s request timeout
  });

  it("does not cut an upgraded connection at the request timeout", async () => {
    const port = await start({ headersTimeoutMs: 200, requestTimeoutMs: 400 });
    const upgraded = open(port, "GET / HTTP/1.1\r\nhost: x\r\nconnection: upgrade\r\nupgrade: echo\r\n\r\n");
    await new Promise((r) => setTimeout(r, 1_200)); // three request timeouts
    upgraded.socket.write("still here");
    await vi.waitFor(() => expect(upgraded.received()).toMatch(/^HTTP\/1\.1 101 [\s\S]*\r\n\r\nstill here$/));
  });

  it("answers 408 to a body still arriving at the request timeout", async () => {
    const port = await start({ headersTimeoutMs: 200, requestTimeoutMs: 400 });
    const slow = open(port, "POST / HTTP/1.1\r\nhost: x\r\ncontent-length: 100\r\n\r\nabc");
    expect(await within(slow.closed, 5_000)).toBe(true);
    expect(slow.received()).toMatch(/^HTTP\/1\.1 408 /);
  });

  it("refuses connections past the per-address cap with a 503 while other addresses are served", async () => {
    const port = await start({ maxConnectionsPerIp: 3 });
    const held = [open(port, HALF), open(port, HALF), open(port, HALF)];
    await Promise.all(held.map((h) => h.connected));
    const extra = open(port, HALF);
    expect(await within(extra.closed, 5_000)).toBe(true);
    expect(extra.received()).toMatch(/^HTTP\/1\.1 503 [\s\S]*connection: close[\s\S]*too many connections/);
    const other = open(port, "GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n", "127.0.0.2");
    await other.closed;
    expect(other.received()).toMatch(/^HTTP\/1\.1 200 [\s\S]*ok$/);
    // A held connection that closes frees its place.
    held[0]?.socket.destroy();
    await held[0]?.closed;
    // The server frees the place once it has seen that close: asked again until then (bounded).
    const ask = () => open(port, "GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n");
    const until = Date.now() + 5_000;
    let again = ask();
    await again.closed;
    while (!/^HTTP\/1\.1 200 /.test(again.received()) && Date.now() < until) {
      again = ask();
      await again.closed;
    }
    expect(again.received()).toMatch(/^HTTP\/1\.1 200 /);
  });

  it("closes connections past the total cap as they arrive", async () => {
    const port = await start({ maxConnections: 2 });
    const held = [open(port, HALF, "127.0.0.3"), open(port, HALF, "127.0.0.4")];
    // Connected before the extra one starts, so ahead of it in the queue the server accepts in order.
    await Promise.all(held.map((h) => h.connected));
    const extra = open(port, HALF, "127.0.0.5");
    expect(await within(extra.closed, 5_000)).toBe(true);
    expect(extra.received()).toBe("");
  });
});

describe("addressKey", () => {
  it("counts IPv4 addresses one by one and IPv6 addresses per /64", () => {
    expect(addressKey("203.0.113.7")).toBe("203.0.113.7");
    expect(addressKey("::ffff:203.0.113.7")).toBe("203.0.113.7");
    expect(addressKey("2001:db8:1:2:aaaa::1")).toBe("2001:db8:1:2::/64");
    expect(addressKey("2001:db8:1:2:bbbb:cccc:dddd:eeee")).toBe("2001:db8:1:2::/64");
    expect(addressKey("2001:db8::1")).toBe("2001:db8:0:0::/64");
    expect(addressKey("::1")).toBe("0:0:0:0::/64");
    expect(addressKey("fe80::1%eth0")).toBe("fe80:0:0:0::/64");
  });
});

describe("loadServerLimits", () => {
  it("reads the variables over the defaults", () => {
    expect(loadServerLimits({ HEADERS_TIMEOUT_MS: "5000", MAX_CONNECTIONS_PER_IP: "10" }, SERVICE_LIMITS)).toEqual({
      ...SERVICE_LIMITS,
      headersTimeoutMs: 5_000,
      maxConnectionsPerIp: 10,
    });
    expect(loadServerLimits({}, SERVICE_LIMITS)).toEqual(SERVICE_LIMITS);
  });
});

/** A process whose only server is made by serve() from the built package, with a metrics listener on a free port. */
const SERVED = `
import { createLogger, serve, serviceMetrics } from ${JSON.stringify(fileURLToPath(new URL("../dist/index.js", import.meta.url)))};
const logger = createLogger({ name: "served", format: "json" });
await serve((req, res) => res.end("hello"), { port: 0, logger, metrics: serviceMetrics({ port: 0 }), onShutdown: async () => logger.info("shutdown hook") });
`;

describe("serve with a metrics listener", () => {
  it("listens on both ports, counts the server's requests on /metrics, and stops both on SIGTERM", async () => {
    const child = spawn(process.execPath, ["--input-type=module", "-e", SERVED], { stdio: ["ignore", "pipe", "inherit"] });
    const lines: { msg?: string; port?: number }[] = [];
    let pending = "";
    child.stdout.on("data", (chunk: Buffer) => {
      pending += chunk.toString();
      const complete = pending.split("\n");
      pending = complete.pop() ?? "";
      for (const line of complete) if (line.startsWith("{")) lines.push(JSON.parse(line));
    });
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    const portOf = (msg: string) => lines.find((l) => l.msg === msg)?.port;
    try {
      await vi.waitFor(() => expect(portOf("metrics listening")).toBeGreaterThan(0), { timeout: 10_000 });
      const service = `http://127.0.0.1:${portOf("listening")}`;
      const metrics = `http://127.0.0.1:${portOf("metrics listening")}`;
      expect(await (await fetch(`${service}/a`)).text()).toBe("hello");
      expect(await (await fetch(`${service}/b`)).text()).toBe("hello");
      // Never through the service's own port.
      expect(await (await fetch(`${service}/metrics`)).text()).toBe("hello");
      const text = await (await fetch(`${metrics}/metrics`)).text();
      expect(text).toContain('http_request_duration_seconds_count{method="GET",route="unmatched",status_class="2xx"} 3');
      expect(text).toContain("nodejs_eventloop_lag_seconds");
      child.kill("SIGTERM");
      expect(await exited).toBe(0);
      expect(lines.map((l) => l.msg)).toContain("shutdown hook");
      await expect(fetch(`${metrics}/metrics`)).rejects.toThrow();
      await expect(fetch(`${service}/`)).rejects.toThrow();
    } finally {
      child.kill("SIGKILL");
    }
  });

  it("fails to start when the metrics port is taken, leaving the service port free", async () => {
    const taken = http.createServer();
    servers.push(taken);
    await new Promise<void>((r) => taken.listen(0, "127.0.0.1", r));
    const port = (taken.address() as net.AddressInfo).port;
    const script = SERVED.replace("serviceMetrics({ port: 0 })", `serviceMetrics({ port: ${port} })`);
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.once("exit", (c) => resolve(c)));
    expect(code).not.toBe(0);
    expect(stderr).toContain("EADDRINUSE");
  });
});
