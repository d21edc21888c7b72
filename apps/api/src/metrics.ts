import { AUTH_VERIFY_ERROR_CODES, type VerificationOutcome, type VerifierOptions } from "@app/auth-verify";
import { type PoolLike, type ServeMetrics, serviceMetrics } from "@app/http-kit";
import { Counter, Gauge, type Registry, register } from "prom-client";

// The API's series (docs/operations.md#metrics). The counters live on prom-client's global
// registry; main.ts serves them, with the gauges below, only when METRICS_PORT is set, and only
// then does the verifier report to them (verifierObservers).

/** Bearer token verifications by outcome: `ok` or the verifier's refusal code (packages/auth-verify/src/errors.ts). */
export const verifications = new Counter({
  name: "api_token_verifications_total",
  help: "Bearer token verifications by outcome (ok or the refusal's code)",
  labelNames: ["outcome"] as const,
});

/** Fetches of identity's key set (cache refreshes, unknown kids and pushes alike) by outcome: `ok`, `failed`. */
export const keySetRefreshes = new Counter({
  name: "api_key_set_refreshes_total",
  help: "Key set fetches from identity by outcome (ok, failed)",
  labelNames: ["outcome"] as const,
});

/**
 * Refreshes a key set announcement (or the event connection's return) set off, by outcome:
 * `refreshed`, `failed` (each retry counts; events/key-set-push.ts).
 */
export const keySetPushes = new Counter({
  name: "api_key_set_pushes_total",
  help: "Key set refreshes set off by a push (announcement or reconnection), by outcome (refreshed, failed)",
  labelNames: ["outcome"] as const,
});

/**
 * Requests (or WebSocket subscriptions) a per-user limiter refused, by limiter: the caps on things
 * held at once (`streams`, `sockets`, `generations`, `mcp-requests`: lib/user-caps.ts), the MCP
 * server's tool calls per minute (`mcp-tool-calls`: lib/user-rates.ts) and a socket's task
 * subscriptions (`ws-subscriptions`: events/ws-hub.ts). Each limiter's module sets its series to 0
 * when it loads. Never a user label: the limit is per user, the series is per limiter.
 */
export const rateLimitRefusals = new Counter({
  name: "api_rate_limit_refusals_total",
  help: "Requests refused by a per-user limiter (429, or rate_limited on a WebSocket), by limiter",
  labelNames: ["limiter"] as const,
});

// Every series an alert reads exists from the start at 0, so its first event is an increase.
for (const outcome of ["ok", "failed"]) keySetRefreshes.inc({ outcome }, 0);
for (const outcome of ["refreshed", "failed"]) keySetPushes.inc({ outcome }, 0);

/** The verifier's observers that feed the counters above. */
export function verifierObservers(): Pick<VerifierOptions, "onOutcome" | "onFetchOutcome"> {
  // One child per outcome, each series at 0 from the start: a verification costs a map lookup and an increment.
  const outcomes: VerificationOutcome[] = ["ok", ...AUTH_VERIFY_ERROR_CODES];
  const byOutcome = new Map(outcomes.map((outcome) => [outcome, verifications.labels(outcome)] as const));
  for (const child of byOutcome.values()) child.inc(0);
  return {
    onOutcome: (outcome) => byOutcome.get(outcome)?.inc(),
    onFetchOutcome: (ok) => keySetRefreshes.inc({ outcome: ok ? "ok" : "failed" }),
  };
}

/** What the open-connection gauges read (events/sse.ts, events/ws-hub.ts). */
export interface OpenConnections {
  sse: { readonly size: number };
  ws: { readonly size: number };
}

/**
 * Everything the API serves on METRICS_PORT: the counters above, the process and pool series and
 * request durations (serviceMetrics), and the SSE streams and WebSockets open now.
 */
export function apiMetrics(options: {
  port: number;
  host?: string;
  pool: PoolLike;
  open: OpenConnections;
  registry?: Registry;
}): ServeMetrics {
  const registry = options.registry ?? register;
  const { open } = options;
  new Gauge({
    name: "api_sse_streams_open",
    help: "Server-sent event streams open now",
    registers: [registry],
    collect() {
      this.set(open.sse.size);
    },
  });
  new Gauge({
    name: "api_websockets_open",
    help: "WebSockets open now",
    registers: [registry],
    collect() {
      this.set(open.ws.size);
    },
  });
  return serviceMetrics({ ...options, registry });
}
