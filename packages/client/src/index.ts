export type { AuthApi, SignedIn } from "./auth.js";
export { type AppClient, type ClientOptions, createClient } from "./client.js";
export { ApiError, type ClientErrorCode, type ClientOnlyCode, isUnauthorized } from "./errors.js";
export type { FetchLike } from "./http.js";
export type { AdminApi, FilePart, Page, PageRequest, TasksApi, UploadsApi } from "./resources.js";
export { readSse, type SseEvent, SseParser } from "./sse.js";
export { defaultStorage, memoryStorage, type TokenStorage } from "./storage.js";
export type { GenerateEvent, TaskStream, TaskStreamOptions } from "./streams.js";
export type { TaskSocket, TaskSocketOptions, WebSocketFactory, WebSocketLike } from "./ws.js";
