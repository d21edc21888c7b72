import http, { type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Logger } from "pino";
import { type Registry, register } from "prom-client";

/** Options of {@link startMetricsListener}. */
export interface MetricsListenerOptions {
  /** 0 picks a free port (tests). */
  port: number;
  /** Default 127.0.0.1: reachable by a Prometheus on the same host or network namespace only. */
  host?: string;
  /** Default: prom-client's global registry, where the services declare their series. */
  registry?: Registry;
  logger?: Logger;
}

/**
 * The metrics listener: `GET /metrics` answers the registry in the Prometheus text format; any
 * other method or path answers 404. No authentication: it listens on its own port (METRICS_PORT),
 * bound to METRICS_HOST, which the gateway never routes to.
 */
export function startMetricsListener(options: MetricsListenerOptions): Promise<Server> {
  const registry = options.registry ?? register;
  const { logger } = options;
  const server = http.createServer({ headersTimeout: 5_000, requestTimeout: 15_000 }, (req, res) => {
    const path = req.url?.split("?", 1)[0];
    if (req.method !== "GET" || path !== "/metrics") {
      res.writeHead(404, { "content-type": "text/plain; charset=utf-8" }).end("not found: GET /metrics\n");
      return;
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { "content-type": registry.contentType }).end(text),
      (error: unknown) => {
        logger?.warn({ err: (error as Error).message }, "metrics collection failed");
        res.writeHead(500, { "content-type": "text/plain; charset=utf-8" }).end("metrics collection failed\n");
      },
    );
  });
  server.maxConnections = 32;
  const host = options.host ?? "127.0.0.1";
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, host, () => {
      server.off("error", reject);
      logger?.info({ port: (server.address() as AddressInfo).port, host }, "metrics listening");
      resolve(server);
    });
  });
}

/** Closes the listener and its idle keep-alive connections (a scrape in progress is cut). */
export function stopMetricsListener(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
