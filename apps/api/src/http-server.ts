import { createServer, type Server } from "node:http";
import type { ApiApp } from "./app.js";
import type { ApiConfig } from "./config.js";

/**
 * The API's HTTP server: the Express app, the WebSocket upgrade, keep-alive longer than a load
 * balancer's idle timeout, and a request head limit of `maxHeaderBytes` (128 KiB by default) so an
 * oversized token is refused by the verifier with a 401 envelope rather than by the parser.
 */
export function createHttpServer(api: ApiApp, config: Pick<ApiConfig, "maxHeaderBytes">): Server {
  const server = createServer({ maxHeaderSize: config.maxHeaderBytes }, api.app);
  server.keepAliveTimeout = 65_000;
  api.attachWebSocket(server);
  return server;
}
