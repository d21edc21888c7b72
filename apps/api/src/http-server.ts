import { createServer, type Server } from "node:http";
import { limitConnections, loadServerLimits, SERVICE_LIMITS, type ServerLimits, serverOptions } from "@app/http-kit";
import type { ApiApp } from "./app.js";
import type { ApiConfig } from "./config.js";

/**
 * The API's HTTP server: the Express app, the WebSocket upgrade, keep-alive longer than a load
 * balancer's idle timeout, and a request head limit of `maxHeaderBytes` (128 KiB by default) so an
 * oversized token is refused by the verifier with a 401 envelope rather than by the parser.
 * Head and request timeouts and a total connection cap come from `limits` (docs/edge-limits.md).
 */
export function createHttpServer(
  api: ApiApp,
  config: Pick<ApiConfig, "maxHeaderBytes">,
  limits: ServerLimits = loadServerLimits(process.env, SERVICE_LIMITS, "api"),
): Server {
  const server = createServer({ maxHeaderSize: config.maxHeaderBytes, ...serverOptions(limits) }, api.app);
  limitConnections(server, limits);
  api.attachWebSocket(server);
  return server;
}
