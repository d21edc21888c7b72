import { WS_PATH, WS_TOKEN_PARAM, type WsClientMessage, type WsServerMessage, wsServerMessage } from "@app/contracts";
import { type BackoffOptions, backoffDelay, sleep } from "./backoff.js";
import { ApiError } from "./errors.js";
import type { Http } from "./http.js";

/** The part of the WebSocket API the client uses (the browser's `WebSocket` fits; so does `ws`). */
export interface WebSocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: "message", listener: (event: { data: unknown }) => void): void;
  addEventListener(type: "close", listener: (event: { code: number; reason: string }) => void): void;
  addEventListener(type: "error", listener: () => void): void;
}

/** Makes a socket for a URL (default: `new WebSocket(url)`). */
export type WebSocketFactory = (url: string) => WebSocketLike;

/** Options of {@link connectTaskSocket}. */
export interface TaskSocketOptions {
  /** Every server message after `ready` (`subscribed`, `event`, `error`, `pong`, ...). */
  onMessage(message: WsServerMessage): void;
  /** The socket closed for good: `close()` was called, reconnecting is off, or the JWT is refused. */
  onClose?(code: number, reason: string): void;
  /** The connection dropped; a new one is tried after `delayMs` (attempt 0 first). */
  onReconnecting?(attempt: number, delayMs: number): void;
  /** A new connection is ready and every subscription was sent again, each from its last event id. */
  onReconnected?(): void;
  /** Delays between attempts (capped exponential + jitter, see backoff.ts); `false`: never reconnect. */
  reconnect?: BackoffOptions | false;
}

/** An open task-events socket that reconnects by itself and resumes each subscription. */
export interface TaskSocket {
  /** The user id the server authenticated. */
  readonly userId: string;
  /** Subscribes to a task; with `lastEventId` the stored events after it are replayed first. */
  subscribe(taskId: string, lastEventId?: string): void;
  unsubscribe(taskId: string): void;
  /** The last event id received for a task: where a reconnect resumes it. */
  lastEventId(taskId: string): string | undefined;
  ping(): void;
  close(): void;
}

const OPEN = 1;

function wsUrl(http: Http, token: string): string {
  const url = new URL(`${http.baseUrl}${WS_PATH}`);
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  url.searchParams.set(WS_TOKEN_PARAM, token);
  return url.toString();
}

function parse(data: unknown): WsServerMessage | undefined {
  if (typeof data !== "string") return undefined;
  try {
    const parsed = wsServerMessage.safeParse(JSON.parse(data));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

interface Opened {
  socket: WebSocketLike;
  userId: string;
}

/** Opens one socket and resolves once the server said `ready`; rejects if it closed before. */
function open(
  factory: WebSocketFactory,
  url: string,
  onMessage: (message: WsServerMessage) => void,
  onClose: (code: number, reason: string) => void,
): Promise<Opened> {
  return new Promise((resolve, reject) => {
    const socket = factory(url);
    let ready = false;
    // A refused upgrade shows up as an error, then a close: the close decides.
    socket.addEventListener("error", () => undefined);
    socket.addEventListener("message", (event) => {
      const message = parse(event.data);
      if (!message) return;
      if (!ready && message.type === "ready") {
        ready = true;
        resolve({ socket, userId: message.userId });
      } else if (ready) onMessage(message);
    });
    socket.addEventListener("close", (event) => {
      if (ready) onClose(event.code, event.reason);
      else reject(new ApiError(401, "unauthorized", `the WebSocket upgrade was refused (close ${event.code})`));
    });
  });
}

/** Opens with the stored JWT, or once more after get-session refreshed it. */
async function openAuthenticated(
  http: Http,
  factory: WebSocketFactory,
  onMessage: (message: WsServerMessage) => void,
  onClose: (code: number, reason: string) => void,
): Promise<Opened> {
  const token = http.tokens.get();
  if (token) {
    const opened = await open(factory, wsUrl(http, token), onMessage, onClose).catch(() => undefined);
    if (opened) return opened;
  }
  const fresh = (await http.refresh().catch(() => ({ token: null }))).token;
  if (!fresh) throw new ApiError(401, "unauthorized", "no JWT for the WebSocket: sign in first");
  return open(factory, wsUrl(http, fresh), onMessage, onClose);
}

/**
 * Connects to `/api/ws?token=<JWT>` (browsers cannot set headers on a WebSocket, so the JWT
 * travels as the query parameter). A refused upgrade is retried once after get-session
 * refreshed the JWT; if that fails too, the promise rejects with a 401 {@link ApiError}.
 * When an open connection drops, it reconnects after a capped exponential delay with jitter
 * ({@link backoffDelay}) and subscribes again to every task from the last event id it received,
 * so the server replays exactly the events that were missed. A refused JWT ends it (`onClose`),
 * and so does the end of the session (the JWT dropped, see Http.track).
 */
export async function connectTaskSocket(http: Http, factory: WebSocketFactory, options: TaskSocketOptions): Promise<TaskSocket> {
  const subscriptions = new Map<string, string | undefined>();
  let closed = false;
  const stopped = new AbortController();
  let current: WebSocketLike;
  const onMessage = (message: WsServerMessage) => {
    if (message.type === "event" && message.event.id && subscriptions.has(message.event.taskId)) {
      subscriptions.set(message.event.taskId, message.event.id);
    }
    options.onMessage(message);
  };
  const send = (message: WsClientMessage) => {
    if (current.readyState === OPEN) current.send(JSON.stringify(message));
  };
  const resubscribe = () => {
    for (const [taskId, lastEventId] of subscriptions) send({ type: "subscribe", taskId, ...(lastEventId ? { lastEventId } : {}) });
  };
  let untrack = () => {};
  const reconnect = async (code: number, reason: string): Promise<void> => {
    for (let attempt = 0; !closed; attempt += 1) {
      const delay = backoffDelay(attempt, options.reconnect || {});
      options.onReconnecting?.(attempt, delay);
      await sleep(delay, stopped.signal);
      if (closed) return;
      try {
        const opened = await openAuthenticated(http, factory, onMessage, onDrop);
        if (closed) return opened.socket.close(1000, "client closed");
        current = opened.socket;
        resubscribe();
        options.onReconnected?.();
        return;
      } catch (error) {
        // No JWT at all (signed out, session over): retrying cannot help.
        if (error instanceof ApiError && error.unauthorized && !http.tokens.get()) break;
      }
    }
    if (!closed) {
      closed = true;
      untrack();
      options.onClose?.(code, reason);
    }
  };
  function onDrop(code: number, reason: string): void {
    if (closed) return;
    if (options.reconnect === false) {
      closed = true;
      untrack();
      options.onClose?.(code, reason);
      return;
    }
    void reconnect(code, reason);
  }
  const first = await openAuthenticated(http, factory, onMessage, onDrop);
  current = first.socket;
  const socket: TaskSocket = {
    userId: first.userId,
    subscribe: (taskId, lastEventId) => {
      subscriptions.set(taskId, lastEventId);
      send({ type: "subscribe", taskId, ...(lastEventId ? { lastEventId } : {}) });
    },
    unsubscribe: (taskId) => {
      subscriptions.delete(taskId);
      send({ type: "unsubscribe", taskId });
    },
    lastEventId: (taskId) => subscriptions.get(taskId),
    ping: () => send({ type: "ping" }),
    close: () => {
      if (closed) return;
      closed = true;
      untrack();
      stopped.abort();
      current.close(1000, "client closed");
      options.onClose?.(1000, "client closed");
    },
  };
  // The end of the session (the JWT dropped) closes the socket like close() does.
  untrack = http.track(socket.close);
  return socket;
}
