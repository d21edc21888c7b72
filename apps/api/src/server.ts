import { createDb } from "@app/db";
import { createLogger } from "@app/http-kit";
import { createApp } from "./app.js";
import { loadApiConfig } from "./config.js";
import { createHttpServer } from "./http-server.js";

const config = loadApiConfig();
const logger = createLogger({ name: "api", level: config.logLevel });
const db = createDb(config.databaseUrl, { onPoolError: (err) => logger.warn({ err: err.message }, "database connection lost") });
const api = createApp({ config, db, logger });
const server = createHttpServer(api, config);
await api.start();

await new Promise<void>((resolve, reject) => {
  server.once("error", reject);
  server.listen(config.port, config.host, () => {
    const address = server.address();
    const port = typeof address === "object" && address ? address.port : config.port;
    logger.info({ port, host: config.host }, "listening");
    resolve();
  });
});

let stopping = false;
async function stop(signal: NodeJS.Signals): Promise<void> {
  if (stopping) process.exit(1);
  stopping = true;
  logger.info({ signal }, "shutting down");
  // SSE streams get a final `shutdown` event and sockets close with 1001 and the reason, so
  // clients know to reconnect (to another instance) instead of treating it as an error.
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  await api.shutdown("server shutting down");
  server.closeIdleConnections();
  const force = setTimeout(() => {
    logger.warn("drain timed out; closing remaining connections");
    api.ws.terminateAll();
    server.closeAllConnections();
  }, config.shutdownDrainMs);
  force.unref();
  await closed;
  clearTimeout(force);
  // No request runs any more: partial uploads cut by the stop are deleted now, not left behind.
  await api.close().catch((err: Error) => logger.warn({ err: err.message }, "upload directory cleanup failed"));
  await db.close();
  logger.flush?.();
  process.exit(0);
}
process.once("SIGTERM", (s) => void stop(s));
process.once("SIGINT", (s) => void stop(s));
