import type { TracingOptions } from "./types.js";

export type { TracingOptions, UrlRedactor } from "./types.js";

/** What {@link startTracing} started, kept so that {@link shutdownTracing} can flush it. */
let running: { shutdown(): Promise<void> } | undefined;

/**
 * True when spans are to be exported: `OTEL_EXPORTER_OTLP_ENDPOINT` is set (and not empty), and
 * `OTEL_SDK_DISABLED` is not `true`.
 */
export function tracingEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim()) && env.OTEL_SDK_DISABLED?.trim().toLowerCase() !== "true";
}

/**
 * Starts OpenTelemetry tracing when `OTEL_EXPORTER_OTLP_ENDPOINT` is set, before the service's
 * own modules load (each service's server.ts calls it, then imports main.js): spans of incoming
 * and outgoing HTTP (node:http and fetch), Express routes, PostgreSQL and Redis, exported over
 * OTLP/HTTP (JSON) in batches, with W3C trace context read from and written to HTTP headers.
 * Without the variable it returns at once and loads none of the SDK (sdk.ts is imported only
 * here, and only then).
 */
export async function startTracing(options: TracingOptions): Promise<void> {
  if (running || !tracingEnabled()) return;
  const { startSdk } = await import("./sdk.js");
  running = await startSdk(options);
}

/**
 * Exports the spans still buffered and stops tracing (a service's last shutdown step, before
 * process.exit, which would drop them). Nothing to do when tracing is off; safe to call twice.
 */
export async function shutdownTracing(): Promise<void> {
  const current = running;
  running = undefined;
  await current?.shutdown();
}
