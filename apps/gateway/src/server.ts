import { commaList, createLogger, EDGE_LIMITS, loadConfig, loadServerLimits, portSchema } from "@app/http-kit";
import { z } from "zod";
import { politeDrain } from "./drain.js";
import { createGateway, devMailUpstream } from "./gateway.js";

const config = loadConfig(
  z.object({
    HOST: z.string().default("127.0.0.1"),
    PORT: portSchema.default(3000),
    IDENTITY_UPSTREAMS: commaList.refine((l) => l.length > 0, "IDENTITY_UPSTREAMS needs at least one URL"),
    API_UPSTREAMS: commaList.refine((l) => l.length > 0, "API_UPSTREAMS needs at least one URL"),
    LOG_LEVEL: z.string().default("info"),
    // Below the launcher's 10 s stop grace (tools/stack/src/processes.ts), so the drain ends first.
    SHUTDOWN_DRAIN_MS: z.coerce.number().int().min(0).default(8_000),
    NODE_ENV: z.string().optional(),
    // The launcher's development mailbox (tools/stack/src/dev-mail.ts); ignored in production.
    DEV_MAIL_URL: z.url().optional(),
    // The public base URL: its host is, besides loopback names, the one `/dev/mail` answers on.
    BASE_URL: z.url().optional(),
  }),
  process.env,
  "gateway",
);
const limits = loadServerLimits(process.env, EDGE_LIMITS, "gateway");
const logger = createLogger({ name: "gateway", level: config.LOG_LEVEL });
const server = createGateway({
  identity: config.IDENTITY_UPSTREAMS,
  api: config.API_UPSTREAMS,
  logger,
  limits,
  devMail: devMailUpstream(config),
  baseUrl: config.BASE_URL,
});
const drain = politeDrain(server, logger);
server.listen(config.PORT, config.HOST, () => logger.info({ port: config.PORT }, "listening"));

let stopping = false;
async function stop(signal: NodeJS.Signals): Promise<void> {
  if (stopping) process.exit(1);
  stopping = true;
  logger.info({ signal, drainMs: config.SHUTDOWN_DRAIN_MS }, "shutting down; draining open connections");
  const outcome = await drain.drain(config.SHUTDOWN_DRAIN_MS);
  logger.info({ outcome }, "stopped");
  logger.flush?.();
  process.exit(0);
}
process.on("SIGTERM", (s) => void stop(s));
process.on("SIGINT", (s) => void stop(s));
