#!/usr/bin/env node
// The web app's static server: `node apps/web/dist/server/serve.js` (started by `pnpm start`).
import path from "node:path";
import { fileURLToPath } from "node:url";
import { loadConfig, portSchema } from "@app/http-kit";
import { z } from "zod";
import { createStaticServer } from "./static-server.js";

const config = loadConfig(
  z.object({
    HOST: z.string().default("127.0.0.1"),
    PORT: portSchema.default(5173),
    API_BASE_URL: z.url({ error: "API_BASE_URL must be an absolute URL" }).default("http://localhost:3000"),
    WEB_ROOT: z.string().min(1).optional(),
    // Bounds as apps/web/src/app/config.ts reads them: at most an hour between checks.
    SESSION_RECHECK_SECONDS: z.coerce
      .number()
      .int()
      .min(1, "SESSION_RECHECK_SECONDS must be at least 1")
      .max(3600, "SESSION_RECHECK_SECONDS must be at most 3600")
      .default(60),
  }),
  process.env,
  "web",
);
const root = config.WEB_ROOT ?? path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "public");
const server = createStaticServer({ root, apiBaseUrl: config.API_BASE_URL, sessionRecheckSeconds: config.SESSION_RECHECK_SECONDS });
server.listen(config.PORT, config.HOST, () => {
  process.stdout.write(`${JSON.stringify({ msg: "listening", port: config.PORT, api: config.API_BASE_URL })}\n`);
});

const stop = () => {
  server.close(() => process.exit(0));
  server.closeIdleConnections();
  setTimeout(() => process.exit(0), 3_000).unref();
};
process.once("SIGTERM", stop);
process.once("SIGINT", stop);
