import { createDb } from "@app/db";
import { createLogger, serve } from "@app/http-kit";
import { shutdownTracing } from "@app/telemetry";
import { createApp } from "./app.js";
import { loadApiConfig } from "./config.js";
import { createHttpServer } from "./http-server.js";
import { apiMetrics } from "./metrics.js";

const config = loadApiConfig();
const logger = createLogger({ name: "api", level: config.logLevel, format: config.logFormat });
const db = createDb(config.databaseUrl, { onPoolError: (err) => logger.warn({ err: err.message }, "database connection lost") });
const api = createApp({ config, db, logger });
const server = createHttpServer(api, config);
await api.start();

// METRICS_PORT: /metrics on a listener of its own, started and stopped with the server (metrics.ts).
const metricsPort = config.metrics.port;
const metrics =
  metricsPort === undefined ? undefined : apiMetrics({ port: metricsPort, host: config.metrics.host, pool: db.pool, open: api });

await serve(server, {
  port: config.port,
  host: config.host,
  logger,
  drainMs: config.shutdownDrainMs,
  metrics,
  // SSE streams get a final `shutdown` event and sockets close with 1001 and the reason, so
  // clients know to reconnect (to another instance) instead of treating it as an error.
  onDrain: () => api.shutdown("server shutting down"),
  onDeadline: () => api.ws.terminateAll(),
  onShutdown: async () => {
    // No request runs any more: partial uploads cut by the stop are deleted now, not left behind.
    await api.close().catch((err: Error) => logger.warn({ err: err.message }, "upload directory cleanup failed"));
    await db.close();
    // serve() exits the process next: the spans still batched are sent first (no-op when tracing is off).
    await shutdownTracing();
  },
});
