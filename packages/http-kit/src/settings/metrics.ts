import { z } from "zod";
import { portSchema } from "./values.js";

/**
 * The metrics listener of identity and the API (docs/operations.md#metrics): `/metrics` in the
 * Prometheus text format on a port of its own, never the public one, so the gateway never routes
 * to it. Off unless set.
 */
export const metricsSettingsShape = {
  METRICS_PORT: portSchema.optional().describe("port of the `/metrics` listener (Prometheus text format); off when unset"),
  METRICS_HOST: z.string().min(1).default("127.0.0.1").describe("address the `/metrics` listener binds to"),
};

/** The parsed metrics settings. */
export interface MetricsSettings {
  /** Port of the `/metrics` listener; undefined: no listener. */
  port: number | undefined;
  host: string;
}

/** Builds the metrics settings from the parsed environment. */
export function metricsSettings(env: { METRICS_PORT?: number | undefined; METRICS_HOST: string }): MetricsSettings {
  return { port: env.METRICS_PORT, host: env.METRICS_HOST };
}
