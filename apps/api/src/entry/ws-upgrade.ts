import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { WS_PATH, WS_TOKEN_PARAM } from "@app/contracts";
import { AppError, redactUrl, toAppError, writeUpgradeError } from "@app/http-kit";
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

/** Query parameter names whose values never reach a log line (compared after percent-decoding). */
const SECRET_NAMES = new Set(["token", "access_token", "code", "code_verifier", "state", "password", "secret"]);

/** Decodes a query component as URLSearchParams does (`+` is a space); undefined when malformed. */
function decodeComponent(value: string): string | undefined {
  try {
    return decodeURIComponent(value.replace(/\+/g, " "));
  } catch {
    return undefined;
  }
}

/** The raw `name=value` pieces of a URL's query. */
function queryParts(rawUrl: string): Array<{ name: string; value: string }> {
  const at = rawUrl.indexOf("?");
  if (at < 0) return [];
  const query = rawUrl.slice(at + 1).split("#")[0] ?? "";
  return query
    .split("&")
    .filter((part) => part !== "")
    .map((part) => {
      const eq = part.indexOf("=");
      return eq < 0 ? { name: part, value: "" } : { name: part.slice(0, eq), value: part.slice(eq + 1) };
    });
}

/**
 * The WebSocket token(s) of an upgrade URL, read from literal `token=` parameters only. A name
 * that only decodes to `token` (`%74oken=`, `tok%65n=`) is `disguised`: log redaction matches the
 * literal name, so such a request is refused rather than accepted with its token in the logs.
 */
export function wsTokenParams(rawUrl: string): { tokens: string[]; disguised: boolean } {
  const tokens: string[] = [];
  let disguised = false;
  for (const { name, value } of queryParts(rawUrl)) {
    if (name === WS_TOKEN_PARAM) tokens.push(decodeComponent(value) ?? value);
    else if (decodeComponent(name) === WS_TOKEN_PARAM) disguised = true;
  }
  return { tokens, disguised };
}

/** The URL as logged: every secret-named parameter's value replaced, whatever the spelling of its name. */
export function redactUpgradeUrl(rawUrl: string | undefined): string | undefined {
  if (rawUrl === undefined) return undefined;
  const at = rawUrl.indexOf("?");
  if (at < 0) return redactUrl(rawUrl);
  const parts = queryParts(rawUrl).map(({ name, value }) => {
    const decoded = (decodeComponent(name) ?? name).toLowerCase();
    return SECRET_NAMES.has(decoded) ? `${name}=[REDACTED]` : value === "" ? name : `${name}=${value}`;
  });
  return redactUrl(`${rawUrl.slice(0, at)}?${parts.join("&")}`);
}

/**
 * The WebSocket entry: `GET /api/ws?token=<JWT>` upgrade. Browsers cannot set headers on a
 * WebSocket, so the shared primitive is called with `Bearer <token>` built from the query
 * parameter; a missing or bad token refuses the upgrade with 401 (503 when no key set can be had).
 * Only a literal `token=` parameter is read: two of them, or a percent-encoded spelling of the
 * name, answer 401 `malformed_token`. The URL is logged only with the token redacted.
 */
export function wsUpgradeHandler(options: WsUpgradeOptions): (req: IncomingMessage, socket: Duplex, head: Buffer) => void {
  return (req, socket, head) => {
    socket.on("error", () => socket.destroy());
    const url = new URL(req.url ?? "/", "http://placeholder");
    const logged = redactUpgradeUrl(req.url);
    if (url.pathname !== WS_PATH) {
      options.logger.warn({ url: logged, status: 404 }, "websocket upgrade refused");
      return writeUpgradeError(socket, new AppError("not_found", "no websocket route here"));
    }
    const { tokens, disguised } = wsTokenParams(req.url ?? "/");
    const token = tokens[0];
    // Two token parameters are ambiguous (which one would a proxy or a log see?): refused. So is
    // an encoded spelling of the name, which the log redaction would not recognise.
    const presented =
      tokens.length > 1
        ? Promise.reject(new AppError("malformed_token", "more than one token parameter"))
        : disguised
          ? Promise.reject(new AppError("malformed_token", "the token parameter must be spelled literally: token="))
          : new Promise<AuthUser>((resolve) => resolve(options.authenticate(token ? `Bearer ${token}` : undefined)));
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
        writeUpgradeError(socket, appError);
      });
  };
}
