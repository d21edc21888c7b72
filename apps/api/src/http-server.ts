import type { Server } from "node:http";
import { createLimitedServer } from "@app/http-kit";
import type { ApiApp } from "./app.js";
import type { ApiConfig } from "./config.js";

/**
 * The API's HTTP server: the Express app, the WebSocket upgrade, keep-alive longer than a load
 * balancer's idle timeout, and a request head limit of `maxHeaderBytes` (128 KiB by default) so an
 * oversized token is refused by the verifier with a 401 envelope rather than by the parser.
 * Head and request timeouts and a total connection cap come from `config.limits` (docs/edge-limits.md).
 */
export function createHttpServer(api: ApiApp, config: Pick<ApiConfig, "maxHeaderBytes" | "limits">): Server {
  const server = createLimitedServer(api.app, config.limits, { maxHeaderSize: config.maxHeaderBytes });
  api.attachWebSocket(server);
  return server;
}
