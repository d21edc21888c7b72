#!/usr/bin/env node
// The web app's static server: `node apps/web/dist/server/serve.js` (started by `pnpm start`).
import { createLogger, serve } from "@app/http-kit";
import { loadWebServerConfig } from "./config.js";
import { staticHandler } from "./static-server.js";

const config = loadWebServerConfig();
const logger = createLogger({ name: "web", level: config.logLevel, format: config.logFormat });
const handler = staticHandler({ root: config.root, apiBaseUrl: config.apiBaseUrl, sessionRecheckSeconds: config.sessionRecheckSeconds });
await serve(handler, { port: config.port, host: config.host, logger, limits: config.limits, drainMs: 3_000 });
