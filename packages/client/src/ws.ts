import { WS_PATH, WS_TOKEN_PARAM, type WsClientMessage, type WsServerMessage, wsServerMessage } from "@app/contracts";
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
  /** The socket closed (after `ready`). */
  onClose?(code: number, reason: string): void;
}

/** An open task-events socket. */
export interface TaskSocket {
  /** The user id the server authenticated. */
  readonly userId: string;
  /** Subscribes to a task; with `lastEventId` the stored events after it are replayed first. */
  subscribe(taskId: string, lastEventId?: string): void;
  unsubscribe(taskId: string): void;
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

/** Opens one socket and resolves once the server said `ready`; rejects if it closed before. */
function open(factory: WebSocketFactory, url: string, options: TaskSocketOptions): Promise<{ socket: WebSocketLike; userId: string }> {
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
      } else if (ready) options.onMessage(message);
    });
    socket.addEventListener("close", (event) => {
      if (ready) options.onClose?.(event.code, event.reason);
      else reject(new ApiError(401, "unauthorized", `the WebSocket upgrade was refused (close ${event.code})`));
    });
  });
}

/**
 * Connects to `/api/ws?token=<JWT>` (browsers cannot set headers on a WebSocket, so the JWT
 * travels as the query parameter). A refused upgrade is retried once after get-session
 * refreshed the JWT; if that fails too, the promise rejects with a 401 {@link ApiError}.
 */
export async function connectTaskSocket(http: Http, factory: WebSocketFactory, options: TaskSocketOptions): Promise<TaskSocket> {
  let token = http.tokens.get();
  let opened: { socket: WebSocketLike; userId: string } | undefined;
  if (token) opened = await open(factory, wsUrl(http, token), options).catch(() => undefined);
  if (!opened) {
    token = (await http.refresh().catch(() => ({ token: null }))).token;
    if (!token) throw new ApiError(401, "unauthorized", "no JWT for the WebSocket: sign in first");
    opened = await open(factory, wsUrl(http, token), options);
  }
  const { socket, userId } = opened;
  const send = (message: WsClientMessage) => {
    if (socket.readyState === OPEN) socket.send(JSON.stringify(message));
  };
  return {
    userId,
    subscribe: (taskId, lastEventId) => send({ type: "subscribe", taskId, ...(lastEventId ? { lastEventId } : {}) }),
    unsubscribe: (taskId) => send({ type: "unsubscribe", taskId }),
    ping: () => send({ type: "ping" }),
    close: () => socket.close(1000, "client closed"),
  };
}
