import type { Response } from "express";

/** Interval of SSE heartbeat comments (15 s). */
export const SSE_HEARTBEAT_MS = 15_000;

/** One SSE message. */
export interface SseMessage {
  id?: string | null | undefined;
  event: string;
  data: unknown;
}

/** An open SSE response. */
export interface SseStream {
  readonly closed: boolean;
  send(message: SseMessage): void;
  /** Ends the stream (optionally telling the client why with a final `shutdown` event). */
  close(reason?: string): void;
  onClose(listener: () => void): void;
}

/**
 * Tracks open SSE streams so a shutdown can end each one with a reason. Every stream gets the SSE
 * headers, a `retry:` hint, a heartbeat comment every `heartbeatMs`, and `id:` lines for events
 * that have an id (so the browser sends `Last-Event-ID` when it reconnects).
 */
export class SseHub {
  readonly #streams = new Set<SseStream>();
  readonly #heartbeatMs: number;

  constructor(options: { heartbeatMs?: number } = {}) {
    this.#heartbeatMs = options.heartbeatMs ?? SSE_HEARTBEAT_MS;
  }

  /** Number of open streams. */
  get size(): number {
    return this.#streams.size;
  }

  /** Starts an SSE response. */
  open(res: Response): SseStream {
    res.status(200);
    res.setHeader("content-type", "text/event-stream; charset=utf-8");
    res.setHeader("cache-control", "no-cache, no-transform");
    res.setHeader("connection", "keep-alive");
    res.setHeader("x-accel-buffering", "no");
    res.flushHeaders();
    res.write("retry: 3000\n\n");
    const listeners: Array<() => void> = [];
    let closed = false;
    const heartbeat = setInterval(() => res.write(": heartbeat\n\n"), this.#heartbeatMs);
    const finish = () => {
      if (closed) return;
      closed = true;
      clearInterval(heartbeat);
      this.#streams.delete(stream);
      for (const l of listeners.splice(0)) l();
    };
    const stream: SseStream = {
      get closed() {
        return closed;
      },
      send(message) {
        if (closed) return;
        const id = message.id ? `id: ${message.id}\n` : "";
        res.write(`${id}event: ${message.event}\ndata: ${JSON.stringify(message.data)}\n\n`);
      },
      close(reason) {
        if (closed) return;
        if (reason) res.write(`event: shutdown\ndata: ${JSON.stringify({ reason })}\n\n`);
        finish();
        res.end();
      },
      onClose(listener) {
        if (closed) listener();
        else listeners.push(listener);
      },
    };
    // The response's "close" (not the request's, which fires once the body was read) means the
    // client went away or the stream ended.
    res.on("close", finish);
    this.#streams.add(stream);
    return stream;
  }

  /** Ends every open stream with a reason (graceful shutdown). */
  closeAll(reason: string): void {
    for (const stream of [...this.#streams]) stream.close(reason);
  }
}
