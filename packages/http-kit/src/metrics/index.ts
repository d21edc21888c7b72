import type { Registry } from "prom-client";
import { register } from "prom-client";
import { type HttpMetrics, httpMetrics } from "./http.js";
import { type PoolLike, poolMetrics } from "./pool.js";
import { processMetrics } from "./process.js";

export {
  type HttpMetrics,
  httpMetrics,
  methodLabel,
  routeTemplateOf,
  setRouteTemplate,
  statusClass,
  UNMATCHED_ROUTE,
} from "./http.js";
export { type MetricsListenerOptions, startMetricsListener, stopMetricsListener } from "./listener.js";
export { type PoolLike, poolMetrics } from "./pool.js";
export { processMetrics } from "./process.js";

/** What {@link serve}'s `metrics` option takes: where to listen, what to answer, what to observe. */
export interface ServeMetrics {
  port: number;
  host?: string;
  registry?: Registry;
  /** The request duration histogram of the served server. */
  http?: HttpMetrics;
}

/**
 * The series every service has, on `registry` (default prom-client's global one): the process
 * metrics with the event-loop delay, the database pool's use, and the request durations of the
 * server {@link serve} serves. Call it once per process (main.ts), and only when METRICS_PORT is
 * set: nothing is measured otherwise.
 */
export function serviceMetrics(options: { port: number; host?: string; pool?: PoolLike; registry?: Registry }): ServeMetrics {
  const registry = options.registry ?? register;
  processMetrics(registry);
  if (options.pool) poolMetrics(options.pool, registry);
  return {
    port: options.port,
    ...(options.host === undefined ? {} : { host: options.host }),
    registry,
    http: httpMetrics(registry),
  };
}
