import { randomUUID } from "node:crypto";
import { type TaskEventView, type WsClientMessage, wsClientMessage } from "@app/contracts";
import { runWithContext, toAppError } from "@app/http-kit";
import type { Logger } from "pino";
import type { WebSocket } from "ws";
import type { AuthUser } from "../entry/authenticate.js";
import { createExpiryScheduler, type ExpiryScheduler, tokenExpiry } from "../lib/expiry.js";
import { isIdText } from "../lib/pagination.js";
import type { ResumeBudget } from "../lib/resume-budget.js";
import { rateLimitRefusals } from "../metrics.js";
import type { EventBus } from "./bus.js";
import { wsEventFrame } from "./event-json.js";
import { openTaskFeed, parseEventId } from "./feed.js";
import { createSession, type Session, type Slot } from "./ws-session.js";

export { SLOW_CLOSE, WS_SLOW_READER_GRACE_MS } from "./ws-session.js";

/** Most task subscriptions one socket may hold. */
export const MAX_SUBSCRIPTIONS = 100;
/** The subscription cap's limiter in `api_rate_limit_refusals_total` (0 from the start). */
const SUBSCRIPTIONS_LIMITER = "ws-subscriptions";
rateLimitRefusals.inc({ limiter: SUBSCRIPTIONS_LIMITER }, 0);
/** Interval of protocol pings; a socket that missed one pong is terminated. */
export const WS_PING_MS = 30_000;
/** Unsent bytes a socket may hold before it is closed as too slow (1 MiB). */
export const WS_MAX_BUFFERED_BYTES = 1024 * 1024;

/** Close code and reason sent to every socket on shutdown. */
export const SHUTDOWN_CLOSE = { code: 1001, reason: "server shutting down" } as const;
/** Close code and reason when the bearer token's `exp` passes. */
export const EXPIRED_CLOSE = { code: 4001, reason: "token expired" } as const;
/** Close code and reason when the socket's account is deleted (its token is refused from then on). */
export const ACCOUNT_DELETED_CLOSE = { code: 4003, reason: "account deleted" } as const;

/** Options of {@link WsHub}. */
export interface WsHubDeps {
  bus: EventBus;
  /**
   * Whether the user may read a task (tasks/service.ts): their own, or one of an organization they
   * are a member of (`shared`: every member's events); undefined otherwise.
   */
  tasks: { readable(userId: string, taskId: string): Promise<{ shared: boolean } | undefined> };
  logger: Logger;
  pingMs?: number;
  maxBufferedBytes?: number;
  /** Most stored events a `lastEventId` resume replays; deeper, an error `resync` tells the client to refetch. */
  maxResumeEvents?: number;
  expiry?: ExpiryScheduler;
  /** Accounts deleted since their tokens were issued (account/deleted-users.ts): their sockets close. */
  deleted?: { has(userId: string): boolean };
  /** The instance's resume budget (lib/resume-budget.ts) and how long a catch-up waits for room in it. */
  resume?: { budget: ResumeBudget; maxWaitMs?: number };
}

/**
 * WebSocket sessions carrying task events. A client sends `{type:"subscribe", taskId, lastEventId?}`
 * for a task it may read, its own or one of its organizations' (any other task answers an `error`
 * with code `not_found`), receives `{type:"event", event}` for each, and can `unsubscribe` or `ping`. Every handler runs in a request
 * context tagged with the socket's user, so log lines carry `userId` like HTTP ones. A socket is
 * closed with 4001 when its token expires, with 4003 when its account is deleted and with 1013
 * when it reads too slowly.
 */
export class WsHub {
  /** Open sockets and their users. */
  readonly #sockets = new Map<WebSocket, string>();
  readonly #maxBuffered: number;
  readonly #expiry: ExpiryScheduler;

  constructor(private readonly deps: WsHubDeps) {
    this.#maxBuffered = deps.maxBufferedBytes ?? WS_MAX_BUFFERED_BYTES;
    this.#expiry = deps.expiry ?? createExpiryScheduler();
  }

  /** Open sockets. */
  get size(): number {
    return this.#sockets.size;
  }

  /** Takes over an upgraded, authenticated socket. */
  accept(ws: WebSocket, auth: AuthUser): void {
    const context = { requestId: randomUUID(), userId: auth.userId };
    const session = createSession(ws, auth, { maxBuffered: this.#maxBuffered, resume: this.deps.resume });
    let alive = true;
    const ping = setInterval(() => {
      if (!alive) return void ws.terminate();
      alive = false;
      ws.ping();
    }, this.deps.pingMs ?? WS_PING_MS);
    const expiresAt = tokenExpiry(auth.claims);
    const cancelExpiry =
      expiresAt === undefined ? undefined : this.#expiry.at(expiresAt, () => ws.close(EXPIRED_CLOSE.code, EXPIRED_CLOSE.reason));
    this.#sockets.set(ws, auth.userId);
    ws.on("pong", () => {
      alive = true;
    });
    // ws rejects bad frames (over maxPayload, invalid UTF-8, bad opcode) by emitting 'error';
    // unhandled, that event would take the whole process down.
    ws.on("error", (error) => {
      this.deps.logger.debug({ err: error.message }, "websocket protocol error");
      ws.terminate();
    });
    ws.on("close", () => {
      session.markClosed();
      clearInterval(ping);
      cancelExpiry?.();
      this.#sockets.delete(ws);
      for (const taskId of [...session.slots.keys()]) release(session, taskId);
    });
    ws.on("message", (raw, isBinary) => {
      runWithContext(context, () => {
        void this.#handle(raw.toString(), isBinary, session).catch((error: unknown) => {
          const appError = toAppError(error);
          if (appError.status >= 500) this.deps.logger.warn({ err: (error as Error).message }, "websocket message failed");
          session.send({ type: "error", code: appError.code, message: appError.expose ? appError.message : "internal error" });
        });
      });
    });
    session.send({ type: "ready", userId: auth.userId });
    // The account may have been deleted while this socket was being upgraded.
    if (this.deps.deleted?.has(auth.userId)) ws.close(ACCOUNT_DELETED_CLOSE.code, ACCOUNT_DELETED_CLOSE.reason);
  }

  /** Closes every socket of a deleted account with 4003. */
  closeUser(userId: string): void {
    for (const [ws, owner] of this.#sockets) if (owner === userId) ws.close(ACCOUNT_DELETED_CLOSE.code, ACCOUNT_DELETED_CLOSE.reason);
  }

  async #handle(text: string, isBinary: boolean, s: Session): Promise<void> {
    let json: unknown;
    try {
      json = isBinary ? undefined : JSON.parse(text);
    } catch {
      json = undefined;
    }
    const parsed = wsClientMessage.safeParse(json);
    if (!parsed.success) return s.send({ type: "error", code: "bad_request", message: "unrecognised message" });
    const msg = parsed.data;
    if (msg.type === "ping") return s.send({ type: "pong" });
    // A lone surrogate or a control character cannot name a task, and PostgreSQL cannot even
    // compare against it: answered here instead of failing the query (see lib/pagination.ts).
    if (!isIdText(msg.taskId)) return s.send({ type: "error", code: "bad_request", message: "taskId is not a valid task id" });
    if (msg.type === "unsubscribe") {
      release(s, msg.taskId);
      return s.send({ type: "unsubscribed", taskId: msg.taskId });
    }
    const existing = s.slots.get(msg.taskId);
    if (existing) {
      if (await existing.ready) s.send({ type: "subscribed", taskId: msg.taskId });
      return;
    }
    if (s.slots.size >= MAX_SUBSCRIPTIONS) {
      rateLimitRefusals.inc({ limiter: SUBSCRIPTIONS_LIMITER });
      return s.send({ type: "error", code: "rate_limited", message: `at most ${MAX_SUBSCRIPTIONS} subscriptions`, taskId: msg.taskId });
    }
    // Reserve the slot before the first await: concurrent subscribes, an unsubscribe or the
    // socket's close all see it, and whatever feed this opens is closed if the slot is let go.
    let settle: (live: boolean) => void = () => undefined;
    const slot: Slot = {
      feed: undefined,
      released: false,
      left: new AbortController(),
      ready: new Promise((resolve) => (settle = resolve)),
    };
    s.slots.set(msg.taskId, slot);
    try {
      const live = await this.#subscribe(s, slot, msg);
      settle(live);
    } catch (error) {
      if (s.slots.get(msg.taskId) === slot) s.slots.delete(msg.taskId);
      settle(false);
      throw error;
    }
  }

  /** Opens the feed of a reserved slot; false when the slot was let go meanwhile (then nothing stays open). */
  async #subscribe(s: Session, slot: Slot, msg: Extract<WsClientMessage, { type: "subscribe" }>): Promise<boolean> {
    const { taskId } = msg;
    const gone = () => slot.released || s.closed;
    const reader = await this.deps.tasks.readable(s.auth.userId, taskId);
    if (!reader) {
      if (s.slots.get(taskId) === slot) s.slots.delete(taskId);
      if (!gone()) s.send({ type: "error", code: "not_found", message: "task not found", taskId });
      return false;
    }
    if (gone()) return false;
    // "subscribed" goes out once the listener is in place, before the backlog; the backlog is then
    // paced by the reader (sendPaced), and live events are sent as they come.
    let live = false;
    const deliver = (event: TaskEventView): void | Promise<void> => {
      const after = () => {
        if (event.type === "task.deleted" && s.slots.get(taskId) === slot) release(s, taskId);
      };
      if (!live) return s.sendPaced(wsEventFrame(event)).then(after);
      s.send(wsEventFrame(event));
      after();
    };
    const feed = await openTaskFeed(this.deps.bus, {
      taskId,
      userId: s.auth.userId,
      shared: reader.shared,
      afterId: parseEventId(msg.lastEventId),
      maxResumeEvents: this.deps.maxResumeEvents,
      signal: slot.left.signal,
      onListening: () => {
        if (!gone()) s.send({ type: "subscribed", taskId });
      },
      onResync: (_latest, why) => {
        const message =
          why === "deep"
            ? `more than ${this.deps.maxResumeEvents} events since lastEventId; refetch the task`
            : "too many resumes under way on this server; refetch the task";
        s.send({ type: "error", code: "resync", message, taskId });
      },
      resume: s.gate(slot.left.signal),
      deliver,
    });
    live = true;
    if (gone()) {
      feed.close();
      return false;
    }
    slot.feed = feed;
    return true;
  }

  /** Closes every socket with 1001 and a reason (graceful shutdown). */
  closeAll(reason: string = SHUTDOWN_CLOSE.reason): void {
    for (const ws of this.#sockets.keys()) ws.close(SHUTDOWN_CLOSE.code, reason);
  }

  /** Terminates sockets that did not finish closing. */
  terminateAll(): void {
    for (const ws of this.#sockets.keys()) ws.terminate();
  }
}

/** Lets go of a socket's subscription: closes its feed now, or makes the subscribe in flight close it. */
function release(s: Session, taskId: string): void {
  const slot = s.slots.get(taskId);
  if (!slot) return;
  s.slots.delete(taskId);
  slot.released = true;
  slot.left.abort();
  slot.feed?.close();
  slot.feed = undefined;
}
