import type { GenerateBody, Me } from "@app/contracts";
import { type AuthApi, authApi } from "./auth.js";
import { ApiError } from "./errors.js";
import { type FetchLike, Http } from "./http.js";
import { type AgentsApi, type ChatsApi, type McpServersApi, type ProjectsApi, productApis } from "./products.js";
import { type AdminApi, adminApi, me, type TasksApi, tasksApi, type UploadsApi, uploadsApi } from "./resources.js";
import { defaultStorage, type TokenStorage, TokenStore } from "./storage.js";
import { type GenerateEvent, generateStream, openTaskStream, type TaskStream, type TaskStreamOptions } from "./streams.js";
import { connectTaskSocket, type TaskSocket, type TaskSocketOptions, type WebSocketFactory, type WebSocketLike } from "./ws.js";

/** Options of {@link createClient}. */
export interface ClientOptions {
  /** The service's one base URL, e.g. `http://localhost:3000` (identity under /api/auth, the API under /api). */
  baseUrl: string;
  /** Where the JWT is kept under `authToken` (default: `localStorage`, or memory outside a browser). */
  storage?: TokenStorage;
  /** fetch to use (default: the global one). Outside a browser it must keep the session cookie itself. */
  fetch?: FetchLike;
  /** WebSocket factory (default: the global `WebSocket`). */
  webSocket?: WebSocketFactory;
}

/** The typed client of the service. */
export interface AppClient {
  readonly baseUrl: string;
  readonly auth: AuthApi;
  readonly tasks: TasksApi & {
    /** Follows a task's events over SSE (fetch + stream reader), resuming with `Last-Event-ID`. */
    stream(taskId: string, options: TaskStreamOptions): TaskStream;
  };
  readonly uploads: UploadsApi;
  readonly projects: ProjectsApi;
  readonly agents: AgentsApi;
  /** Chats and their messages. */
  readonly chats: ChatsApi;
  /** MCP servers (their OAuth tokens are never returned). */
  readonly mcpServers: McpServersApi;
  /** `/api/admin/*`: 403 `forbidden` for callers without the admin role. */
  readonly admin: AdminApi;
  /** `GET /api/me`. */
  me(): Promise<Me>;
  /** `POST /api/generate/stream`: `delta`… then `done` or `error`. */
  generate(body: GenerateBody, signal?: AbortSignal): AsyncGenerator<GenerateEvent>;
  /** Opens the task-events WebSocket (`/api/ws?token=`). */
  connectSocket(options: TaskSocketOptions): Promise<TaskSocket>;
  /** A business call with the bearer JWT and the 401 retry (every product route also has a typed method). */
  send(path: string, init?: RequestInit & { headers?: Record<string, string> }): Promise<Response>;
}

/** The browser's `WebSocket` (Node 20 has none: pass `options.webSocket`, e.g. from the `ws` package). */
function globalWebSocket(): WebSocketFactory {
  return (url) => {
    const Ctor = (globalThis as { WebSocket?: new (url: string) => WebSocketLike }).WebSocket;
    if (!Ctor) throw new ApiError(0, "network_error", "no WebSocket implementation: pass options.webSocket");
    return new Ctor(url);
  };
}

/**
 * Creates the client. Sign-in is the contract's two-step login (credentials, then awaited
 * get-session whose `set-auth-jwt` is stored as `authToken`); every business call carries
 * `Authorization: Bearer <authToken>`, parses the `ok(data)` envelope with the contracts'
 * schemas and throws {@link ApiError} for error envelopes; a 401 retries get-session once.
 */
export function createClient(options: ClientOptions): AppClient {
  const doFetch: FetchLike = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  const http = new Http({ baseUrl: options.baseUrl, tokens: new TokenStore(options.storage ?? defaultStorage()), fetch: doFetch });
  const webSocket = options.webSocket ?? globalWebSocket();
  return {
    baseUrl: http.baseUrl,
    auth: authApi(http),
    tasks: { ...tasksApi(http), stream: (taskId, streamOptions) => openTaskStream(http, taskId, streamOptions) },
    uploads: uploadsApi(http),
    ...productApis(http),
    admin: adminApi(http),
    me: () => me(http),
    generate: (body, signal) => generateStream(http, body, signal),
    connectSocket: (socketOptions) => connectTaskSocket(http, webSocket, socketOptions),
    send: (path, init) => http.send(path, init),
  };
}
