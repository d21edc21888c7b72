import { createDb } from "@app/db";
import { createLogger, serve } from "@app/http-kit";
import { createApp } from "./app.js";
import { loadIdentityConfig } from "./config.js";

const config = loadIdentityConfig();
const logger = createLogger({ name: "identity", level: config.logLevel });
const db = createDb(config.databaseUrl, { onPoolError: (err) => logger.warn({ err: err.message }, "database connection lost") });
const { app, service } = createApp({ config, db, logger });

// Make sure a key set exists before the first get-session (and repair it if AUTH_SECRET changed).
await service.keys.view().catch((err: Error) => logger.warn({ err: err.message }, "key set not ready yet; will retry on first use"));

const housekeeping = setInterval(
  () => {
    service.sessions.purgeExpired().then(
      (n) => n && logger.info({ purged: n }, "expired sessions purged"),
      (err: Error) => logger.warn({ err: err.message }, "session purge failed"),
    );
  },
  10 * 60 * 1000,
);
housekeeping.unref();

await serve(app, {
  port: config.port,
  host: config.host,
  logger,
  onShutdown: async () => {
    clearInterval(housekeeping);
    await db.close();
  },
});
