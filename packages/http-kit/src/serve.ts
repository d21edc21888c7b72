import type { Server } from "node:http";
import type { Express } from "express";
import type { Logger } from "pino";

/** Options of {@link serve}. */
export interface ServeOptions {
  port: number;
  host?: string;
  logger: Logger;
  /** Runs after the server stopped accepting, before exit (close pools, streams). */
  onShutdown?: () => Promise<void>;
  /** How long in-flight requests may take to finish after SIGTERM (default 10 s). */
  drainMs?: number;
}

/**
 * Listens and handles SIGTERM/SIGINT: stop accepting, let in-flight requests finish (bounded),
 * run `onShutdown`, exit 0. A second signal exits at once.
 */
export function serve(app: Express, options: ServeOptions): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = app.listen(options.port, options.host ?? "127.0.0.1", (error?: Error) => {
      if (error) return reject(error);
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : options.port;
      options.logger.info({ port }, "listening");
      resolve(server);
    });
    server.keepAliveTimeout = 65_000;
    let stopping = false;
    const stop = (signal: NodeJS.Signals) => {
      if (stopping) process.exit(1);
      stopping = true;
      options.logger.info({ signal }, "shutting down");
      const force = setTimeout(() => {
        options.logger.warn("drain timed out; closing remaining connections");
        server.closeAllConnections();
      }, options.drainMs ?? 10_000);
      force.unref();
      server.close(async () => {
        clearTimeout(force);
        try {
          await options.onShutdown?.();
        } catch (error) {
          options.logger.error({ err: error }, "shutdown hook failed");
        }
        options.logger.flush?.();
        process.exit(0);
      });
      server.closeIdleConnections();
    };
    process.on("SIGTERM", stop);
    process.on("SIGINT", stop);
  });
}
