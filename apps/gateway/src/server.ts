import { commaList, createLogger, loadConfig, portSchema } from "@app/http-kit";
import { z } from "zod";
import { createGateway } from "./gateway.js";

const config = loadConfig(
  z.object({
    HOST: z.string().default("127.0.0.1"),
    PORT: portSchema.default(3000),
    IDENTITY_UPSTREAMS: commaList.refine((l) => l.length > 0, "IDENTITY_UPSTREAMS needs at least one URL"),
    API_UPSTREAMS: commaList.refine((l) => l.length > 0, "API_UPSTREAMS needs at least one URL"),
    LOG_LEVEL: z.string().default("info"),
  }),
  process.env,
  "gateway",
);
const logger = createLogger({ name: "gateway", level: config.LOG_LEVEL });
const server = createGateway({ identity: config.IDENTITY_UPSTREAMS, api: config.API_UPSTREAMS, logger });
server.listen(config.PORT, config.HOST, () => logger.info({ port: config.PORT }, "listening"));

const stop = () => {
  server.close(() => process.exit(0));
  server.closeIdleConnections();
  setTimeout(() => {
    server.closeAllConnections();
    process.exit(0);
  }, 5_000).unref();
};
process.once("SIGTERM", stop);
process.once("SIGINT", stop);
