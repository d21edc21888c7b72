import { collectDefaultMetrics, type Registry, register } from "prom-client";

/**
 * prom-client's default process metrics: CPU, memory, heap, handles, garbage collection, and the
 * event-loop delay (`nodejs_eventloop_lag_seconds` and its percentiles `nodejs_eventloop_lag_p99_seconds`...).
 * Call it once per registry.
 */
export function processMetrics(registry: Registry = register): void {
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 10 });
}
