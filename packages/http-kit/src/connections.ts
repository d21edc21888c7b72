import http, { type RequestListener, type Server, type ServerOptions } from "node:http";
import type { Socket } from "node:net";
import type { Logger } from "pino";
import { AppError } from "./app-error.js";
import { errorBody } from "./envelope.js";
import type { ServerLimits } from "./settings/server.js";

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
const BUSY_BODY = errorBody(new AppError("service_unavailable", "too many connections from this address", { expose: true }));
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

/** Options of {@link createLimitedServer}. */
export interface LimitedServerOptions {
  /** Largest request head in bytes (Node's default, 16 KiB, when unset). */
  maxHeaderSize?: number;
  logger?: Logger;
}

/** An HTTP server for `handler` with `limits` applied ({@link serverOptions}, {@link limitConnections}). */
export function createLimitedServer(handler: RequestListener, limits: ServerLimits, options: LimitedServerOptions = {}): Server {
  const server = http.createServer(
    { ...(options.maxHeaderSize === undefined ? {} : { maxHeaderSize: options.maxHeaderSize }), ...serverOptions(limits) },
    handler,
  );
  limitConnections(server, limits, options.logger);
  return server;
}
