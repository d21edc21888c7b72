import http, { type Server, type ServerOptions } from "node:http";
import type { Socket } from "node:net";
import type { Express } from "express";
import type { Logger } from "pino";
import { z } from "zod";
import { loadConfig } from "./config.js";

/**
 * How many connections a server holds and how long a client may take to send a request
 * (docs/edge-limits.md lists the variables). A client that opens connections and sends half a
 * request head would otherwise hold a file descriptor per connection for minutes.
 */
export interface ServerLimits {
  /** Time to receive a complete request head (`HEADERS_TIMEOUT_MS`); then 408 and close. */
  headersTimeoutMs: number;
  /**
   * Time to receive a complete request, head and body (`REQUEST_TIMEOUT_MS`; 0 = none). It ends
   * when the request is received, so long responses (SSE) and upgraded WebSockets are not cut.
   */
  requestTimeoutMs: number;
  /** Idle time of a keep-alive connection between requests (`KEEP_ALIVE_TIMEOUT_MS`). */
  keepAliveTimeoutMs: number;
  /** Request headers kept per request (`MAX_HEADERS_COUNT`); further ones are dropped. */
  maxHeadersCount: number;
  /** Open connections of the whole server (`MAX_CONNECTIONS`); further ones are closed at once. */
  maxConnections: number;
  /** Open connections per client address, IPv6 per /64 (`MAX_CONNECTIONS_PER_IP`; 0 = no per-address cap). */
  maxConnectionsPerIp: number;
}

/**
 * Identity and API: behind the gateway or a reverse proxy, so every client has the proxy's
 * address and a per-address cap would hit everyone; keep-alive outlives the proxy's idle timeout.
 */
export const SERVICE_LIMITS: ServerLimits = {
  headersTimeoutMs: 20_000,
  requestTimeoutMs: 120_000,
  keepAliveTimeoutMs: 65_000,
  maxHeadersCount: 200,
  maxConnections: 8192,
  maxConnectionsPerIp: 0,
};

/** The gateway: the first server a client meets, so the shortest timeouts and a per-address cap. */
export const EDGE_LIMITS: ServerLimits = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 120_000,
  keepAliveTimeoutMs: 5_000,
  maxHeadersCount: 200,
  maxConnections: 4096,
  maxConnectionsPerIp: 256,
};

const count = z.coerce.number().int().min(0);
const positive = z.coerce.number().int().min(1);

/** Reads the limit variables over `defaults`; invalid values exit with a clear message. */
export function loadServerLimits(env: NodeJS.ProcessEnv, defaults: ServerLimits, name = "service"): ServerLimits {
  const schema = z
    .object({
      HEADERS_TIMEOUT_MS: positive.default(defaults.headersTimeoutMs),
      REQUEST_TIMEOUT_MS: count.default(defaults.requestTimeoutMs),
      KEEP_ALIVE_TIMEOUT_MS: positive.default(defaults.keepAliveTimeoutMs),
      MAX_HEADERS_COUNT: positive.default(defaults.maxHeadersCount),
      MAX_CONNECTIONS: positive.default(defaults.maxConnections),
      MAX_CONNECTIONS_PER_IP: count.default(defaults.maxConnectionsPerIp),
    })
    .refine((v) => v.REQUEST_TIMEOUT_MS === 0 || v.REQUEST_TIMEOUT_MS >= v.HEADERS_TIMEOUT_MS, {
      message: "REQUEST_TIMEOUT_MS must be 0 or at least HEADERS_TIMEOUT_MS",
      path: ["REQUEST_TIMEOUT_MS"],
    });
  const v = loadConfig(schema, env, name);
  return {
    headersTimeoutMs: v.HEADERS_TIMEOUT_MS,
    requestTimeoutMs: v.REQUEST_TIMEOUT_MS,
    keepAliveTimeoutMs: v.KEEP_ALIVE_TIMEOUT_MS,
    maxHeadersCount: v.MAX_HEADERS_COUNT,
    maxConnections: v.MAX_CONNECTIONS,
    maxConnectionsPerIp: v.MAX_CONNECTIONS_PER_IP,
  };
}

/**
 * `http.createServer` options for `limits`. Node checks the head and request timeouts every
 * `connectionsCheckingInterval` (30 s by default, longer than the timeouts themselves), so the
 * check runs a tenth of the head timeout apart (at most every second).
 */
export function serverOptions(limits: ServerLimits): ServerOptions {
  return {
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    connectionsCheckingInterval: Math.min(1_000, Math.max(50, Math.floor(limits.headersTimeoutMs / 10))),
  };
}

const REFUSED = Symbol("refused");
const BUSY_BODY = '{"ok":false,"error":{"code":"service_unavailable","message":"too many connections from this address"}}';
const BUSY = [
  "HTTP/1.1 503 Service Unavailable",
  "connection: close",
  "retry-after: 1",
  "content-type: application/json; charset=utf-8",
  `content-length: ${Buffer.byteLength(BUSY_BODY)}`,
  "",
  BUSY_BODY,
].join("\r\n");

/**
 * The unit the per-address cap counts: an IPv4 address (IPv4-mapped IPv6 included), or the /64
 * prefix of an IPv6 address, since one IPv6 client usually holds a whole /64.
 */
export function addressKey(ip: string): string {
  const address = ip.split("%")[0] ?? ip; // no zone index
  if (!address.includes(":")) return address;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped?.[1]) return mapped[1];
  const [head = "", tail] = address.split("::");
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  const groups = tail === undefined ? left : [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill("0"), ...right];
  return `${groups
    .slice(0, 4)
    .map((g) => Number.parseInt(g || "0", 16).toString(16))
    .join(":")}::/64`;
}

/** True for a connection refused by the per-address cap: its requests must not be served. */
export function isRefusedConnection(socket: Socket): boolean {
  return (socket as Socket & { [REFUSED]?: boolean })[REFUSED] === true;
}

/**
 * The room kept for light addresses when a per-address cap is set: once `maxConnections - reserve`
 * connections are open, an address already holding `lightShare` or more is refused, so the last
 * quarter of the total cap stays open to clients holding a few connections (a browser holds up to
 * six per origin plus its streams). Without it, `maxConnections / maxConnectionsPerIp` addresses
 * holding their full share fill the server and lock everyone else out (docs/edge-limits.md).
 */
export function connectionReserve(limits: ServerLimits): { reserve: number; lightShare: number } {
  if (limits.maxConnectionsPerIp <= 0) return { reserve: 0, lightShare: 0 };
  return {
    reserve: Math.floor(limits.maxConnections / 4),
    lightShare: Math.max(1, Math.floor(limits.maxConnectionsPerIp / 32)),
  };
}

/**
 * Applies `limits` to a server made with {@link serverOptions}: the total cap (Node closes
 * connections past `maxConnections` as they arrive), the header count, and, when
 * `maxConnectionsPerIp` is set, a per-address cap and the {@link connectionReserve}: a connection
 * past either gets a 503 with `connection: close` at once and is closed; requests that still
 * arrive on it are marked ({@link isRefusedConnection}) for the handler to ignore.
 */
export function limitConnections(server: Server, limits: ServerLimits, logger?: Logger): void {
  server.maxConnections = limits.maxConnections;
  server.maxHeadersCount = limits.maxHeadersCount;
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  let dropped = 0;
  let warned = 0;
  const note = (what: string, ip?: string) => {
    dropped += 1;
    // One warning per 10 s at most: a flood must not become a log flood.
    if (Date.now() - warned < 10_000) return;
    warned = Date.now();
    logger?.warn({ ip, dropped }, what);
  };
  server.on("drop", (data?: { remoteAddress?: string }) => note("connection refused: MAX_CONNECTIONS reached", data?.remoteAddress));
  if (limits.maxConnectionsPerIp <= 0) return;
  const open = new Map<string, number>();
  const { reserve, lightShare } = connectionReserve(limits);
  let total = 0; // connections admitted here and still open
  // Prepended so the count is taken before Node's HTTP parser starts reading the connection.
  server.prependListener("connection", (socket: Socket) => {
    const ip = addressKey(socket.remoteAddress ?? "unknown");
    const held = open.get(ip) ?? 0;
    const full = held >= limits.maxConnectionsPerIp;
    if (full || (total >= limits.maxConnections - reserve && held >= lightShare)) {
      (socket as Socket & { [REFUSED]?: boolean })[REFUSED] = true;
      socket.on("error", () => socket.destroy());
      socket.write(BUSY);
      socket.destroySoon();
      note(full ? "connection refused: MAX_CONNECTIONS_PER_IP reached" : "connection refused: reserve kept for light addresses", ip);
      return;
    }
    open.set(ip, held + 1);
    total += 1;
    socket.once("close", () => {
      total -= 1;
      const left = (open.get(ip) ?? 1) - 1;
      if (left > 0) open.set(ip, left);
      else open.delete(ip);
    });
  });
}

/** Options of {@link serve}. */
export interface ServeOptions {
  port: number;
  host?: string;
  logger: Logger;
  /** Runs after the server stopped accepting, before exit (close pools, streams). */
  onShutdown?: () => Promise<void>;
  /** How long in-flight requests may take to finish after SIGTERM (default 10 s). */
  drainMs?: number;
  /** Default: {@link SERVICE_LIMITS} with the variables of the process environment applied. */
  limits?: ServerLimits;
}

/**
 * Listens (with {@link ServerLimits}) and handles SIGTERM/SIGINT: stop accepting, let in-flight
 * requests finish (bounded), run `onShutdown`, exit 0. A second signal exits at once.
 */
export function serve(app: Express, options: ServeOptions): Promise<Server> {
  const limits = options.limits ?? loadServerLimits(process.env, SERVICE_LIMITS);
  return new Promise((resolve, reject) => {
    const server = http.createServer(serverOptions(limits), app);
    limitConnections(server, limits, options.logger);
    server.once("error", reject);
    server.listen(options.port, options.host ?? "127.0.0.1", () => {
      server.off("error", reject);
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : options.port;
      options.logger.info({ port }, "listening");
      resolve(server);
    });
    let stopping = false;
    const stop = (signal: NodeJS.Signals) => {
      if (stopping) process.exit(1);
      stopping = true;
      options.logger.info({ signal }, "shutting down");
      const force = setTimeout(() => {
        options.logger.warn("drain timed out; closing remaining connections");
        server.closeAllConnections();
      }, options.drainMs ?? 10_000);
      force.unref();
      server.close(async () => {
        clearTimeout(force);
        try {
          await options.onShutdown?.();
        } catch (error) {
          options.logger.error({ err: error }, "shutdown hook failed");
        }
        options.logger.flush?.();
        process.exit(0);
      });
      server.closeIdleConnections();
    };
    process.on("SIGTERM", stop);
    process.on("SIGINT", stop);
  });
}
