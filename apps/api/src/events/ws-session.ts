import type { WsServerMessage } from "@app/contracts";
import type { WebSocket } from "ws";
import type { AuthUser } from "../entry/authenticate.js";
import { RESUME_MAX_WAIT_MS, type ResumeBudget } from "../lib/resume-budget.js";
import type { ResumeGate, TaskFeed } from "./feed.js";

/** A paced catch-up re-checks the socket's unsent bytes this often. */
const PACE_POLL_MS = 50;
/** A reader that takes in nothing this long during a paced catch-up is closed as too slow. */
export const WS_SLOW_READER_GRACE_MS = 10_000;
/** Close code and reason when the client reads too slowly ("try again later"). */
export const SLOW_CLOSE = { code: 1013, reason: "client too slow; reconnect and resume" } as const;

/**
 * One subscription of a socket. It is reserved synchronously when the subscribe message arrives
 * (before any await), so a second subscribe, an unsubscribe or the socket's close always sees it;
 * `released` tells a subscribe still in flight to close the feed it opens.
 */
export interface Slot {
  feed: TaskFeed | undefined;
  released: boolean;
  /** Aborted when the slot is let go: stops its catch-up. */
  left: AbortController;
  /** Settles once the subscribe finished (true when the feed is live). */
  ready: Promise<boolean>;
}

/** Per-socket state. */
export interface Session {
  auth: AuthUser;
  slots: Map<string, Slot>;
  send(message: WsServerMessage | Buffer): void;
  /** Sends once the socket holds at most the budget unsent (a catch-up paced by its reader). */
  sendPaced(message: Buffer): Promise<void>;
  /** Paces one subscription's catch-up; the socket's subscriptions catch up one at a time. */
  gate(signal: AbortSignal): ResumeGate;
  readonly closed: boolean;
  /** Called when the socket closed. */
  markClosed(): void;
}

/** Options of {@link createSession}. */
export interface SessionOptions {
  /** Unsent bytes the socket may hold (`WS_MAX_BUFFERED_BYTES`). */
  maxBuffered: number;
  /** The instance's resume budget and how long a catch-up waits for room in it (then `resync`). */
  resume?: { budget: ResumeBudget; maxWaitMs?: number } | undefined;
}

/**
 * The sending side of one socket. Live sends close a socket that holds more than its budget unsent
 * (1013), except while a catch-up is paced: then the buffer sits near the budget by design, and a
 * reader that takes nothing for {@link WS_SLOW_READER_GRACE_MS} is closed instead. The socket's
 * subscriptions catch up one at a time, each with room reserved in the instance's resume budget,
 * so together they hold at most the socket's budget.
 */
export function createSession(ws: WebSocket, auth: AuthUser, options: SessionOptions): Session {
  const max = options.maxBuffered;
  let closed = false;
  let pacing = 0;
  let catchUps: Promise<void> = Promise.resolve();
  // Waits while the socket holds `full` or more bytes unsent; false once it is closed.
  const below = async (full: number): Promise<boolean> => {
    let since = Date.now();
    let before = ws.bufferedAmount;
    while (ws.readyState === ws.OPEN && ws.bufferedAmount >= full) {
      await new Promise((r) => setTimeout(r, PACE_POLL_MS));
      if (ws.bufferedAmount < before) since = Date.now();
      before = ws.bufferedAmount;
      if (Date.now() - since > WS_SLOW_READER_GRACE_MS) {
        ws.close(SLOW_CLOSE.code, SLOW_CLOSE.reason);
        return false;
      }
    }
    return ws.readyState === ws.OPEN;
  };
  const paced = async <T>(work: () => Promise<T>): Promise<T> => {
    pacing += 1;
    try {
      return await work();
    } finally {
      pacing -= 1;
    }
  };
  // Waits for the socket's previous catch-up, then for room in the instance's budget.
  const enter = async (signal: AbortSignal): Promise<(() => void) | undefined> => {
    let done: () => void = () => undefined;
    const turn = catchUps;
    catchUps = new Promise<void>((resolve) => {
      done = resolve;
    });
    await turn;
    const budget = options.resume?.budget;
    const maxWaitMs = options.resume?.maxWaitMs ?? RESUME_MAX_WAIT_MS;
    const release = budget ? await budget.acquire(max, { maxWaitMs, signal }) : () => undefined;
    if (!release) {
      done();
      return undefined;
    }
    return () => {
      release();
      done();
    };
  };
  return {
    auth,
    slots: new Map(),
    get closed() {
      return closed;
    },
    markClosed() {
      closed = true;
    },
    send(message) {
      if (ws.readyState !== ws.OPEN) return;
      if (Buffer.isBuffer(message)) ws.send(message, { binary: false });
      else ws.send(JSON.stringify(message));
      if (pacing === 0 && ws.bufferedAmount > max) ws.close(SLOW_CLOSE.code, SLOW_CLOSE.reason);
    },
    sendPaced: (message) =>
      paced(async () => {
        if (await below(max + 1)) ws.send(message, { binary: false });
      }),
    gate: (signal) => ({
      enter: () => enter(signal),
      room: () => paced(async () => ((await below(max)) ? max - ws.bufferedAmount : 0)),
    }),
  };
}
