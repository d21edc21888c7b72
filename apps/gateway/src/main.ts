import { createLogger, serve } from "@app/http-kit";
import { shutdownTracing } from "@app/telemetry";
import { loadGatewayConfig } from "./config.js";
import { createGateway } from "./gateway.js";

const config = loadGatewayConfig();
const logger = createLogger({ name: "gateway", level: config.logLevel, format: config.logFormat });
const server = createGateway({
  identity: config.identity,
  api: config.api,
  logger,
  limits: config.limits,
  devMail: config.devMail,
  baseUrl: config.baseUrl,
});

// The edge stops last (tools/stack/src/launch.ts): while it drains, the upstreams' goodbyes (SSE
// `shutdown`, WebSocket 1001) still travel through it to the clients (serve.ts).
// serve() exits the process after onShutdown: the spans still batched are sent first (no-op when tracing is off).
await serve(server, { port: config.port, host: config.host, logger, drainMs: config.shutdownDrainMs, onShutdown: shutdownTracing });
