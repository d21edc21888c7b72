import type { Response } from "express";
import { type CancelTimer, createExpiryScheduler, type ExpiryScheduler } from "../lib/expiry.js";

/** Interval of SSE heartbeat comments (15 s). */
export const SSE_HEARTBEAT_MS = 15_000;
/** Unsent bytes a stream may hold before it is ended as too slow (1 MiB). */
export const SSE_MAX_BUFFERED_BYTES = 1024 * 1024;
/** How long an ended slow stream may take to flush before its connection is cut. */
export const SSE_SLOW_READER_GRACE_MS = 10_000;

/** One SSE message: `data` is serialized here, or `json` is the already serialized data. */
export type SseMessage = { id?: string | null | undefined; event: string } & ({ data: unknown } | { json: string });

/** An open SSE response. */
export interface SseStream {
  readonly closed: boolean;
  send(message: SseMessage): void;
  /**
   * Sends once the socket buffer holds at most `maxBufferedBytes` (waiting for 'drain'), and never
   * ends the stream for slowness: a catch-up is paced by its reader instead of piling up in memory.
   * Resolves at once when the stream is closed (then nothing is sent).
   */
  sendPaced(message: SseMessage): Promise<void>;
  /**
   * Waits until the response holds less than `maxBufferedBytes` unsent (cutting a reader that takes
   * in nothing for the grace period, as {@link sendPaced} does), then resolves with how many bytes
   * it may take now; 0 once the stream is closed. A catch-up reads its next page within that.
   */
  room(): Promise<number>;
  /** Ends the stream (optionally telling the client why with a final `shutdown` event). */
  close(reason?: string): void;
  onClose(listener: () => void): void;
}

/** Options of {@link SseHub}. */
export interface SseHubOptions {
  heartbeatMs?: number;
  /** Above this many unsent bytes the stream is ended (the client resumes with Last-Event-ID). */
  maxBufferedBytes?: number;
  /** Schedules the end of a stream at its token's expiry. */
  expiry?: ExpiryScheduler;
  /** Accounts deleted since their tokens were issued (account/deleted-users.ts): their streams end. */
  deleted?: { has(userId: string): boolean };
}

/** Options of one stream. */
export interface SseOpenOptions {
  /** When the bearer token expires (ms): the stream then sends `token-expired` and ends. */
  expiresAt?: number | undefined;
  /** The stream's user: {@link SseHub.closeUser} ends it when the account is deleted. */
  userId?: string | undefined;
}

/** The event that ends a stream whose account was deleted (the client stops: its token is refused). */
export const ACCOUNT_DELETED_EVENT = "account-deleted";

/**
 * Tracks open SSE streams so a shutdown can end each one with a reason. Every stream gets the SSE
 * headers, a `retry:` hint, a heartbeat comment every `heartbeatMs`, and `id:` lines for events
 * that have an id (so the browser sends `Last-Event-ID` when it reconnects). A stream ends by
 * itself when its token expires (`event: token-expired`), when its account is deleted
 * (`event: account-deleted`) and when the client reads too slowly (more than `maxBufferedBytes` unsent). A response whose client already left is never tracked.
 */
export class SseHub {
  /** Open streams, each with its user and a way to end it with a last event. */
  readonly #streams = new Map<SseStream, { userId: string | undefined; endWith(event: string): void }>();
  readonly #heartbeatMs: number;
  readonly #maxBuffered: number;
  readonly #expiry: ExpiryScheduler;
  readonly #deleted: { has(userId: string): boolean } | undefined;

  constructor(options: SseHubOptions = {}) {
    this.#heartbeatMs = options.heartbeatMs ?? SSE_HEARTBEAT_MS;
    this.#maxBuffered = options.maxBufferedBytes ?? SSE_MAX_BUFFERED_BYTES;
    this.#expiry = options.expiry ?? createExpiryScheduler();
    this.#deleted = options.deleted;
  }

  /** Unsent bytes a stream may hold (its buffer budget). */
  get maxBufferedBytes(): number {
    return this.#maxBuffered;
  }

  /** Number of open streams. */
  get size(): number {
    return this.#streams.size;
  }

  /** Starts an SSE response (an already closed stream when the client is gone). */
  open(res: Response, options: SseOpenOptions = {}): SseStream {
    if (res.destroyed || res.writableEnded || res.socket?.destroyed === true) return closedStream;
    res.status(200);
    res.setHeader("content-type", "text/event-stream; charset=utf-8");
    res.setHeader("cache-control", "no-cache, no-transform");
    res.setHeader("connection", "keep-alive");
    res.setHeader("x-accel-buffering", "no");
    res.flushHeaders();
    const listeners: Array<() => void> = [];
    // Paced sends waiting for room in the socket buffer; released on 'drain' or when the stream ends.
    const waiting = new Set<() => void>();
    let closed = false;
    let cancelExpiry: CancelTimer | undefined;
    const finish = () => {
      if (closed) return;
      closed = true;
      clearInterval(heartbeat);
      cancelExpiry?.();
      this.#streams.delete(stream);
      res.off("drain", wake);
      wake();
      for (const l of listeners.splice(0)) l();
    };
    const wake = () => {
      for (const resume of [...waiting]) resume();
      waiting.clear();
    };
    res.on("drain", wake);
    // Waits until the buffer is back under the budget. A reader that takes in nothing for the
    // grace period is cut like any too slow reader (the client resumes from its Last-Event-ID).
    const budget = this.#maxBuffered;
    const room = async (full = budget + 1): Promise<void> => {
      let since = Date.now();
      let before = res.writableLength;
      while (!closed && res.writableLength >= full) {
        await new Promise<void>((resolve) => {
          waiting.add(resolve);
          // 'drain' only follows a write the socket refused; a re-check covers a budget below its high-water mark.
          setTimeout(resolve, 250).unref();
        });
        if (res.writableLength < before) since = Date.now();
        before = res.writableLength;
        if (Date.now() - since > SSE_SLOW_READER_GRACE_MS) cutSlow();
      }
    };
    const frame = (message: SseMessage) => {
      const id = message.id ? `id: ${message.id}\n` : "";
      const data = "json" in message ? message.json : JSON.stringify(message.data);
      return `${id}event: ${message.event}\ndata: ${data}\n\n`;
    };
    const end = () => {
      finish();
      res.end();
    };
    const cutSlow = () => {
      end();
      const cut = setTimeout(() => res.destroy(), SSE_SLOW_READER_GRACE_MS);
      cut.unref();
      res.once("close", () => clearTimeout(cut));
    };
    const write = (text: string) => {
      if (closed) return;
      res.write(text);
      // A reader this slow would make the process buffer without bound: end the stream. Its
      // events are durable, so the client resumes from its Last-Event-ID.
      if (res.writableLength > this.#maxBuffered) cutSlow();
    };
    // Unsent bytes already keep the connection busy (a paced catch-up may be waiting on them).
    const heartbeat = setInterval(() => res.writableLength === 0 && write(": heartbeat\n\n"), this.#heartbeatMs);
    const stream: SseStream = {
      get closed() {
        return closed;
      },
      send(message) {
        write(frame(message));
      },
      async sendPaced(message) {
        await room();
        if (!closed) res.write(frame(message));
      },
      async room() {
        await room(budget);
        return closed ? 0 : budget - res.writableLength;
      },
      close(reason) {
        if (closed) return;
        if (reason) res.write(`event: shutdown\ndata: ${JSON.stringify({ reason })}\n\n`);
        end();
      },
      onClose(listener) {
        if (closed) listener();
        else listeners.push(listener);
      },
    };
    // The response's "close" (not the request's, which fires once the body was read) means the
    // client went away or the stream ended.
    res.on("close", finish);
    const endWith = (event: string) => {
      if (closed) return;
      res.write(`event: ${event}\ndata: {}\n\n`);
      end();
    };
    this.#streams.set(stream, { userId: options.userId, endWith });
    write("retry: 3000\n\n");
    if (options.expiresAt !== undefined) cancelExpiry = this.#expiry.at(options.expiresAt, () => endWith("token-expired"));
    // The account may have been deleted while this stream was being set up.
    if (options.userId !== undefined && this.#deleted?.has(options.userId)) endWith(ACCOUNT_DELETED_EVENT);
    return stream;
  }

  /** Ends every stream of a deleted account with `event: account-deleted`. */
  closeUser(userId: string): void {
    for (const [, entry] of [...this.#streams]) if (entry.userId === userId) entry.endWith(ACCOUNT_DELETED_EVENT);
  }

  /** Ends every open stream with a reason (graceful shutdown). */
  closeAll(reason: string): void {
    for (const stream of [...this.#streams.keys()]) stream.close(reason);
  }
}

/** A stream whose client already left: sends nothing, and reports closed to every listener at once. */
export const closedStream: SseStream = {
  closed: true,
  send: () => undefined,
  sendPaced: async () => undefined,
  room: async () => 0,
  close: () => undefined,
  onClose: (listener) => listener(),
};
