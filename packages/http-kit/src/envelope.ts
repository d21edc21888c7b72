import { type ServerResponse, STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";
import { fail } from "@app/contracts";
import type { AppError } from "./app-error.js";

/** Options of {@link writeError}. */
export interface WriteErrorOptions {
  /**
   * Also puts `code` and `message` at the top of the body: better-auth's client (through
   * better-fetch) hands the body to its caller as `error` and reads `error.code` and
   * `error.message` there (apps/identity/src/app.ts turns it on under the auth base path).
   */
  topLevelFields?: boolean;
}

/** The message a client may see: unexposed errors (5xx) get a generic one. */
function publicMessage(error: AppError): string {
  if (error.expose) return error.message;
  return error.status === 503 ? "service unavailable" : "internal error";
}

/** The JSON text of the contract's error envelope for `error`. */
export function errorBody(error: AppError, options: WriteErrorOptions = {}): string {
  const message = publicMessage(error);
  const envelope = fail(error.code, message, error.issues);
  return JSON.stringify(options.topLevelFields ? { ...envelope, code: error.code, message } : envelope);
}

/** Headers every error response carries besides the error's own (e.g. `Retry-After`). */
function headersOf(error: AppError, body: string): Record<string, string> {
  return {
    ...(error.headers ?? {}),
    "content-type": "application/json; charset=utf-8",
    "content-length": String(Buffer.byteLength(body)),
  };
}

/**
 * The one writer of the error envelope for an HTTP response: every edge (route errors, 404s,
 * limiters, the gateway's own refusals) answers through it, so the body, status and headers of
 * an error cannot differ between services.
 */
export function writeError(res: ServerResponse, error: AppError, options: WriteErrorOptions = {}): void {
  const body = errorBody(error, options);
  res.writeHead(error.status, headersOf(error, body));
  res.end(body);
}

/**
 * Answers a refused HTTP upgrade on its raw socket with the same envelope, then ends the socket
 * (an upgrade request has no ServerResponse to write to).
 */
export function writeUpgradeError(socket: Duplex, error: AppError): void {
  if (!socket.writable) return void socket.destroy();
  const body = errorBody(error);
  const head = Object.entries({ ...headersOf(error, body), connection: "close" })
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join("");
  socket.once("finish", () => socket.destroy());
  socket.end(`HTTP/1.1 ${error.status} ${STATUS_CODES[error.status] ?? "Error"}\r\n${head}\r\n${body}`);
}
