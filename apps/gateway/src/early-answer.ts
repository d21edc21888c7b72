import type { IncomingMessage, ServerResponse } from "node:http";

/** How much of a request body the gateway still reads after its response is complete. */
export interface LingerLimits {
  /** Bytes read and discarded after the response (above the API's upload limit, 10 MiB). */
  maxBytes: number;
  /** Time allowed to send them; then the connection is closed. */
  maxMs: number;
}

export const LINGER_LIMITS: LingerLimits = { maxBytes: 16 * 1024 * 1024, maxMs: 5_000 };

/** True when the body still to come is unknown (chunked) or larger than `limits.maxBytes`. */
function tooMuchLeft(req: IncomingMessage, limits: LingerLimits): boolean {
  const declared = Number(req.headers["content-length"]);
  return !Number.isFinite(declared) || declared > limits.maxBytes;
}

/**
 * Decides the `connection` header of an upstream response for the client. Upstreams answer
 * early (apps/api/src/uploads/multipart.ts refuses a file by its type before the body ends) and close
 * their side, since http-proxy asks them for `connection: close`. Forwarding that `close` makes
 * Node close the client's socket while the client is still sending the body, and the client sees
 * a reset (EPIPE) instead of the complete answer. `connection` is hop-by-hop (RFC 9110 §7.6.1):
 * the gateway drops the upstream's and keeps the client's connection, unless the body still
 * expected is larger than it is willing to read ({@link lingerAfterResponse}).
 */
export function clientConnection(proxyRes: IncomingMessage, req: IncomingMessage, limits: LingerLimits): void {
  delete proxyRes.headers.connection;
  delete proxyRes.headers["keep-alive"];
  if (!req.complete && tooMuchLeft(req, limits)) proxyRes.headers.connection = "close";
}

/**
 * Once the response is complete, reads and discards the rest of the request body (bounded by
 * bytes and time), so the client finishes sending and reads the answer on a connection that stays
 * usable. Past either bound the connection is closed, as servers do for an unread body.
 */
export function lingerAfterResponse(req: IncomingMessage, res: ServerResponse, limits: LingerLimits): void {
  res.once("finish", () => {
    if (req.complete || req.destroyed) return;
    req.unpipe();
    let read = 0;
    const stop = () => {
      clearTimeout(timer);
      req.socket.destroy();
    };
    const timer = setTimeout(stop, limits.maxMs);
    timer.unref();
    req.on("data", (chunk: Buffer) => {
      read += chunk.length;
      if (read > limits.maxBytes) stop();
    });
    req.once("end", () => clearTimeout(timer));
    req.once("close", () => clearTimeout(timer));
    req.resume();
  });
}
