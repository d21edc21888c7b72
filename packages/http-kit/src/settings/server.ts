import { z } from "zod";
import { loadConfig } from "./load.js";
import { portSchema } from "./values.js";

/**
 * How many connections a server holds and how long a client may take to send a request
 * (docs/edge-limits.md). A client that opens connections and sends half a request head would
 * otherwise hold a file descriptor per connection for minutes.
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
 * Identity, API and the web server: behind the gateway or a reverse proxy, so every client has
 * the proxy's address and a per-address cap would hit everyone; keep-alive outlives the proxy's
 * idle timeout.
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

/** Where a service listens and which {@link ServerLimits} it applies over `limits`. */
export function serverSettingsShape(defaults: { port: number; limits: ServerLimits }) {
  const { limits } = defaults;
  return {
    HOST: z.string().default("127.0.0.1").describe("the address to listen on"),
    PORT: portSchema.default(defaults.port).describe("listening port"),
    HEADERS_TIMEOUT_MS: positive
      .default(limits.headersTimeoutMs)
      .describe("time to receive a complete request head; then 408 and close ([edge limits](edge-limits.md))"),
    REQUEST_TIMEOUT_MS: count
      .default(limits.requestTimeoutMs)
      .describe("time to receive a complete request, head and body (0: none); at least HEADERS_TIMEOUT_MS; streams are not cut"),
    KEEP_ALIVE_TIMEOUT_MS: positive.default(limits.keepAliveTimeoutMs).describe("idle time of a keep-alive connection between requests"),
    MAX_HEADERS_COUNT: positive.default(limits.maxHeadersCount).describe("request headers kept per request; further ones are dropped"),
    MAX_CONNECTIONS: positive
      .default(limits.maxConnections)
      .describe("open connections of the whole server; further ones are closed at once"),
    MAX_CONNECTIONS_PER_IP: count
      .default(limits.maxConnectionsPerIp)
      .describe("open connections per client address, IPv6 per /64 (0: no per-address cap); past it a 503"),
  };
}

/** The parsed limit variables. */
export interface ServerLimitsEnv {
  HEADERS_TIMEOUT_MS: number;
  REQUEST_TIMEOUT_MS: number;
  KEEP_ALIVE_TIMEOUT_MS: number;
  MAX_HEADERS_COUNT: number;
  MAX_CONNECTIONS: number;
  MAX_CONNECTIONS_PER_IP: number;
}

/** The rule across the limit variables, for each service's `superRefine`. */
export function refineServerLimits(env: ServerLimitsEnv, ctx: z.RefinementCtx): void {
  if (env.REQUEST_TIMEOUT_MS !== 0 && env.REQUEST_TIMEOUT_MS < env.HEADERS_TIMEOUT_MS) {
    ctx.addIssue({ code: "custom", path: ["REQUEST_TIMEOUT_MS"], message: "REQUEST_TIMEOUT_MS must be 0 or at least HEADERS_TIMEOUT_MS" });
  }
}

/** {@link ServerLimits} of the parsed variables. */
export function serverLimitsOf(env: ServerLimitsEnv): ServerLimits {
  return {
    headersTimeoutMs: env.HEADERS_TIMEOUT_MS,
    requestTimeoutMs: env.REQUEST_TIMEOUT_MS,
    keepAliveTimeoutMs: env.KEEP_ALIVE_TIMEOUT_MS,
    maxHeadersCount: env.MAX_HEADERS_COUNT,
    maxConnections: env.MAX_CONNECTIONS,
    maxConnectionsPerIp: env.MAX_CONNECTIONS_PER_IP,
  };
}

/**
 * Reads only the limit variables over `defaults`, for a process that has no config schema of its
 * own (the bench's servers); invalid values exit with a clear message.
 */
export function loadServerLimits(env: NodeJS.ProcessEnv, defaults: ServerLimits, name = "service"): ServerLimits {
  const schema = z.object(serverSettingsShape({ port: 0, limits: defaults })).superRefine(refineServerLimits);
  return serverLimitsOf(loadConfig(schema, env, name));
}

/**
 * `SHUTDOWN_DRAIN_MS`: how long a stopping server lets open requests, streams and sockets end on
 * their own before it closes them (serve.ts).
 */
export function shutdownSettingsShape(defaultMs: number) {
  return {
    SHUTDOWN_DRAIN_MS: z.coerce
      .number()
      .int()
      .min(0)
      .default(defaultMs)
      .describe("how long in-flight requests, streams and sockets may take to end after SIGTERM before they are closed"),
  };
}
