import { randomUUID } from "node:crypto";
import { type WsServerMessage, wsClientMessage } from "@app/contracts";
import { runWithContext, toAppError } from "@app/http-kit";
import type { Logger } from "pino";
import type { WebSocket } from "ws";
import type { AuthUser } from "../entry/authenticate.js";
import type { TasksService } from "../services/tasks.js";
import type { EventBus } from "./bus.js";
import { openTaskFeed, parseEventId, type TaskFeed } from "./feed.js";

/** Most task subscriptions one socket may hold. */
export const MAX_SUBSCRIPTIONS = 100;
/** Interval of protocol pings; a socket that missed one pong is terminated. */
export const WS_PING_MS = 30_000;

/** Close code and reason sent to every socket on shutdown. */
export const SHUTDOWN_CLOSE = { code: 1001, reason: "server shutting down" } as const;

/**
 * WebSocket sessions carrying task events. A client sends `{type:"subscribe", taskId, lastEventId?}`
 * for its own tasks (another user's task answers an `error` with code `not_found`), receives
 * `{type:"event", event}` for each, and can `unsubscribe` or `ping`. Every handler runs in a request
 * context tagged with the socket's user, so log lines carry `userId` like HTTP ones.
 */
export class WsHub {
  readonly #sockets = new Set<WebSocket>();

  constructor(private readonly deps: { bus: EventBus; tasks: TasksService; logger: Logger; pingMs?: number }) {}

  /** Open sockets. */
  get size(): number {
    return this.#sockets.size;
  }

  /** Takes over an upgraded, authenticated socket. */
  accept(ws: WebSocket, auth: AuthUser): void {
    const context = { requestId: randomUUID(), userId: auth.userId };
    const feeds = new Map<string, TaskFeed>();
    const send = (message: WsServerMessage) => {
      if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(message));
    };
    let alive = true;
    const ping = setInterval(() => {
      if (!alive) return void ws.terminate();
      alive = false;
      ws.ping();
    }, this.deps.pingMs ?? WS_PING_MS);
    this.#sockets.add(ws);
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
      clearInterval(ping);
      this.#sockets.delete(ws);
      for (const feed of feeds.values()) feed.close();
      feeds.clear();
    });
    ws.on("message", (raw, isBinary) => {
      runWithContext(context, () => {
        void this.#handle(raw.toString(), isBinary, { auth, feeds, send }).catch((error: unknown) => {
          const appError = toAppError(error);
          if (appError.status >= 500) this.deps.logger.warn({ err: (error as Error).message }, "websocket message failed");
          send({ type: "error", code: appError.code, message: appError.expose ? appError.message : "internal error" });
        });
      });
    });
    send({ type: "ready", userId: auth.userId });
  }

  async #handle(
    text: string,
    isBinary: boolean,
    s: { auth: AuthUser; feeds: Map<string, TaskFeed>; send: (m: WsServerMessage) => void },
  ): Promise<void> {
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
    if (msg.type === "unsubscribe") {
      s.feeds.get(msg.taskId)?.close();
      s.feeds.delete(msg.taskId);
      return s.send({ type: "unsubscribed", taskId: msg.taskId });
    }
    if (s.feeds.has(msg.taskId)) return s.send({ type: "subscribed", taskId: msg.taskId });
    if (s.feeds.size >= MAX_SUBSCRIPTIONS) {
      return s.send({ type: "error", code: "rate_limited", message: `at most ${MAX_SUBSCRIPTIONS} subscriptions`, taskId: msg.taskId });
    }
    const userId = s.auth.userId;
    if (!(await this.deps.tasks.owns(userId, msg.taskId))) {
      return s.send({ type: "error", code: "not_found", message: "task not found", taskId: msg.taskId });
    }
    const early: WsServerMessage[] = [];
    let live = false;
    const feed = await openTaskFeed(this.deps.bus, {
      taskId: msg.taskId,
      userId,
      afterId: parseEventId(msg.lastEventId),
      deliver: (event) => {
        const out: WsServerMessage = { type: "event", event };
        if (live) s.send(out);
        else early.push(out);
        if (event.type === "task.deleted") {
          s.feeds.get(msg.taskId)?.close();
          s.feeds.delete(msg.taskId);
        }
      },
    });
    s.feeds.set(msg.taskId, feed);
    s.send({ type: "subscribed", taskId: msg.taskId });
    live = true;
    for (const m of early.splice(0)) s.send(m);
  }

  /** Closes every socket with 1001 and a reason (graceful shutdown). */
  closeAll(reason: string = SHUTDOWN_CLOSE.reason): void {
    for (const ws of this.#sockets) ws.close(SHUTDOWN_CLOSE.code, reason);
  }

  /** Terminates sockets that did not finish closing. */
  terminateAll(): void {
    for (const ws of this.#sockets) ws.terminate();
  }
}
