import type { IncomingMessage } from "node:http";
import { STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";
import { fail, WS_PATH, WS_TOKEN_PARAM } from "@app/contracts";
import { AppError, redactUrl, toAppError } from "@app/http-kit";
import type { Logger } from "pino";
import type { WebSocket, WebSocketServer } from "ws";
import type { Authenticate, AuthUser } from "./authenticate.js";

/** Options of {@link wsUpgradeHandler}. */
export interface WsUpgradeOptions {
  authenticate: Authenticate;
  wss: WebSocketServer;
  logger: Logger;
  onConnection(ws: WebSocket, auth: AuthUser, req: IncomingMessage): void;
}

/** Answers a refused upgrade with a plain HTTP response carrying the error envelope, then closes. */
function refuse(socket: Duplex, error: AppError): void {
  if (!socket.writable) return void socket.destroy();
  const body = JSON.stringify(fail(error.code, error.expose ? error.message : "service unavailable"));
  const extra = Object.entries(error.headers ?? {})
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join("");
  socket.once("finish", () => socket.destroy());
  socket.end(
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status] ?? "Error"}\r\n` +
      `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extra}Connection: close\r\n\r\n${body}`,
  );
}

/**
 * The WebSocket entry: `GET /api/ws?token=<JWT>` upgrade. Browsers cannot set headers on a
 * WebSocket, so the shared primitive is called with `Bearer <token>` built from the query
 * parameter; a missing or bad token refuses the upgrade with 401 (503 when no key set can be had).
 * The URL is logged only with the token redacted.
 */
export function wsUpgradeHandler(options: WsUpgradeOptions): (req: IncomingMessage, socket: Duplex, head: Buffer) => void {
  return (req, socket, head) => {
    socket.on("error", () => socket.destroy());
    const url = new URL(req.url ?? "/", "http://placeholder");
    const logged = redactUrl(req.url);
    if (url.pathname !== WS_PATH) {
      options.logger.warn({ url: logged, status: 404 }, "websocket upgrade refused");
      return refuse(socket, new AppError("not_found", "no websocket route here"));
    }
    const tokens = url.searchParams.getAll(WS_TOKEN_PARAM);
    const token = tokens[0];
    // Two token parameters are ambiguous (which one would a proxy or a log see?): refused.
    const presented =
      tokens.length > 1
        ? Promise.reject(new AppError("malformed_token", "more than one token parameter"))
        : options.authenticate(token ? `Bearer ${token}` : undefined);
    presented
      .then((auth) => {
        options.wss.handleUpgrade(req, socket, head, (ws) => {
          options.logger.info({ url: logged, userId: auth.userId, status: 101 }, "websocket connected");
          options.onConnection(ws, auth, req);
        });
      })
      .catch((error: unknown) => {
        const appError = toAppError(error);
        options.logger.warn({ url: logged, status: appError.status, code: appError.code }, "websocket upgrade refused");
        refuse(socket, appError);
      });
  };
}
