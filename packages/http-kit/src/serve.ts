import http, { type RequestListener, type Server } from "node:http";
import type { Logger } from "pino";
import { createLimitedServer } from "./connections.js";
import { politeDrain } from "./drain.js";
import { type ServeMetrics, startMetricsListener, stopMetricsListener } from "./metrics/index.js";
import { SERVICE_LIMITS, type ServerLimits } from "./settings/server.js";

/** Options of {@link serve}. */
export interface ServeOptions {
  port: number;
  host?: string;
  logger: Logger;
  /** Limits of the server serve() makes (default {@link SERVICE_LIMITS}); the service's config parses them. */
  limits?: ServerLimits;
  /** Largest request head of the server serve() makes (Node's 16 KiB when unset). */
  maxHeaderSize?: number;
  /**
   * Runs as soon as the server stops accepting, while open connections still carry what it
   * writes: the goodbyes (an SSE `shutdown` event, WebSocket close 1001) that tell clients to
   * reconnect elsewhere rather than report an error.
   */
  onDrain?: () => Promise<void> | void;
  /** Runs when the drain deadline passes, before the connections still open are closed. */
  onDeadline?: () => void;
  /** How long open requests, streams and sockets may take to end after SIGTERM (default 10 s). */
  drainMs?: number;
  /** Runs once every connection has closed, before exit (stop workers, close pools). */
  onShutdown?: () => Promise<void>;
  /**
   * The `/metrics` listener (METRICS_PORT; see {@link serviceMetrics}): it listens once the server
   * does, observes the server's requests, stays scrapable through the drain and stops last.
   * Undefined: no listener, nothing observed.
   */
  metrics?: ServeMetrics | undefined;
}

/**
 * The one listen-and-stop of every server (identity, API, gateway, web). Listens with the limits,
 * then on SIGTERM/SIGINT:
 * 1. stops accepting and runs `onDrain` (the goodbyes);
 * 2. lets open requests, streams and upgraded sockets end on their own, closing each keep-alive
 *    connection once idle, until `drainMs`, then runs `onDeadline` and closes the rest
 *    ({@link politeDrain});
 * 3. runs `onShutdown`, stops the metrics listener, flushes the log and exits 0. A second signal
 *    exits 1 at once.
 *
 * The launcher stops the edge (gateway, web) last (tools/stack/src/launch.ts), so the goodbyes of
 * identity and the API travel through a gateway that is still relaying (docs/edge-limits.md).
 * `target` is a request handler (an Express app), or a server already made with
 * createLimitedServer when the service attaches more to it (the API's WebSocket upgrade).
 */
export function serve(target: RequestListener | Server, options: ServeOptions): Promise<Server> {
  const { logger } = options;
  const server =
    target instanceof http.Server
      ? target
      : createLimitedServer(target, options.limits ?? SERVICE_LIMITS, {
          logger,
          ...(options.maxHeaderSize === undefined ? {} : { maxHeaderSize: options.maxHeaderSize }),
        });
  // Before the first upgrade, so upgraded sockets are known to the drain.
  const drain = politeDrain(server, logger);
  options.metrics?.http?.observe(server);
  let metricsServer: Server | undefined;
  const drainMs = options.drainMs ?? 10_000;
  let stopping = false;
  const stop = async (signal: NodeJS.Signals): Promise<void> => {
    if (stopping) process.exit(1);
    stopping = true;
    logger.info({ signal, drainMs }, "shutting down");
    const drained = drain.drain(drainMs, options.onDeadline);
    try {
      await options.onDrain?.();
    } catch (error) {
      logger.error({ err: error }, "shutdown goodbye failed");
    }
    const outcome = await drained;
    try {
      await options.onShutdown?.();
    } catch (error) {
      logger.error({ err: error }, "shutdown hook failed");
    }
    if (metricsServer) await stopMetricsListener(metricsServer);
    logger.info({ outcome }, "stopped");
    logger.flush?.();
    process.exit(0);
  };
  const listening = new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host ?? "127.0.0.1", () => {
      server.off("error", reject);
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : options.port;
      logger.info({ port, host: options.host ?? "127.0.0.1" }, "listening");
      resolve();
    });
  });
  return listening.then(async () => {
    const { metrics } = options;
    if (metrics) {
      try {
        metricsServer = await startMetricsListener({ ...metrics, logger });
      } catch (error) {
        // A metrics port taken is a misconfiguration to see at start, not a service without metrics.
        await new Promise((r) => server.close(r));
        throw error;
      }
    }
    process.on("SIGTERM", (s) => void stop(s));
    process.on("SIGINT", (s) => void stop(s));
    return server;
  });
}
