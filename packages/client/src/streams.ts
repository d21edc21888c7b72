import {
  type GenerateBody,
  generateDeltaEvent,
  generateDoneEvent,
  generateErrorEvent,
  type TaskEventView,
  taskEventSchema,
} from "@app/contracts";
import type { z } from "zod";
import { type BackoffOptions, backoffDelay, DEFAULT_BACKOFF, sleep } from "./backoff.js";
import { ApiError, errorFromResponse, networkError } from "./errors.js";
import type { Http } from "./http.js";
import { readSse, type SseEvent } from "./sse.js";

/** Options of a task event stream. */
export interface TaskStreamOptions {
  /** Resume after this event id (sent as `Last-Event-ID`). */
  lastEventId?: string;
  /** Called with each task event, in order. */
  onEvent(event: TaskEventView): void;
  /** Called each time the stream is (re)connected. */
  onOpen?(): void;
  /**
   * Called when the resume point lies further back than the API replays (`SSE_MAX_RESUME_EVENTS`):
   * the events in between are not sent, so refetch the task and its messages; the stream goes on
   * live from the newest event (and resumes from there).
   */
  onResync?(): void;
  /** Called with a connection problem; `fatal` problems end the stream. */
  onError?(error: ApiError, fatal: boolean): void;
  /**
   * First reconnect delay when the server names none with `retry:` (default 500 ms, as the WebSocket's); each
   * further failed attempt doubles it up to `backoff.maxMs`, with jitter (see backoff.ts).
   */
  retryMs?: number;
  /** Cap and randomness of the reconnect delays (the same rule as the WebSocket's). */
  backoff?: Omit<BackoffOptions, "initialMs">;
  /** Called before each wait to reconnect, with the attempt number (0 first) and the delay. */
  onRetry?(attempt: number, delayMs: number): void;
  signal?: AbortSignal;
}

/** A running task stream. */
export interface TaskStream {
  /** The id of the last event received: where a reconnect resumes. */
  readonly lastEventId: string | undefined;
  /** Stops the stream. */
  close(): void;
  /** Settles when the stream has ended: undefined when closed or the task was deleted, else the fatal error. */
  readonly done: Promise<ApiError | undefined>;
}

/**
 * Follows `GET /api/tasks/:id/stream` over `fetch` with the bearer JWT. When the connection
 * drops (or the server says `shutdown`), it reconnects with `Last-Event-ID` so no event is lost
 * or repeated, waiting a capped exponential delay with jitter ({@link backoffDelay}) that starts
 * over once a connection opens. 4xx answers (after the one get-session retry on 401) end it, and
 * so does the end of the session (the JWT dropped, see Http.track).
 */
export function openTaskStream(http: Http, taskId: string, options: TaskStreamOptions): TaskStream {
  const controller = new AbortController();
  options.signal?.addEventListener("abort", () => controller.abort(), { once: true });
  let lastEventId = options.lastEventId;
  let retryMs = options.retryMs ?? DEFAULT_BACKOFF.initialMs;
  let attempt = 0;
  const run = async (): Promise<ApiError | undefined> => {
    while (!controller.signal.aborted) {
      try {
        const response = await http.send(`/api/tasks/${encodeURIComponent(taskId)}/stream`, {
          headers: { accept: "text/event-stream", ...(lastEventId ? { "last-event-id": lastEventId } : {}) },
          signal: controller.signal,
        });
        if (!response.ok || !response.body) {
          const error = await errorFromResponse(response);
          const fatal = response.status >= 400 && response.status < 500;
          options.onError?.(error, fatal);
          if (fatal) return error;
        } else {
          attempt = 0;
          options.onOpen?.();
          for await (const message of readSse(response.body)) {
            if (controller.signal.aborted) break;
            if (message.retry !== undefined) retryMs = message.retry;
            if (message.event === "shutdown") break;
            if (message.event === "resync") {
              if (message.id) lastEventId = message.id;
              options.onResync?.();
              continue;
            }
            if (message.event === "" || message.event === "message") continue;
            const parsed = taskEventSchema.safeParse(parseJson(message.data));
            if (!parsed.success) continue;
            if (parsed.data.id) lastEventId = parsed.data.id;
            options.onEvent(parsed.data);
            if (parsed.data.type === "task.deleted") return undefined;
          }
        }
      } catch (cause) {
        if (controller.signal.aborted) break;
        options.onError?.(networkError(cause), false);
      }
      if (controller.signal.aborted) break;
      const delay = backoffDelay(attempt, { ...options.backoff, initialMs: retryMs });
      options.onRetry?.(attempt, delay);
      attempt += 1;
      await sleep(delay, controller.signal);
    }
    return undefined;
  };
  const untrack = http.track(() => controller.abort());
  const done = run().finally(() => {
    untrack();
    controller.abort();
  });
  return {
    get lastEventId() {
      return lastEventId;
    },
    close: () => controller.abort(),
    done,
  };
}

/** One event of a text generation stream. */
export type GenerateEvent =
  | ({ type: "delta" } & z.output<typeof generateDeltaEvent>)
  | ({ type: "done" } & z.output<typeof generateDoneEvent>)
  | ({ type: "error" } & z.output<typeof generateErrorEvent>);

/**
 * `POST /api/generate/stream`: yields `delta` events, then one `done` or `error`. A refused
 * request (400, 401 after the retry, 503) throws {@link ApiError} before the first event.
 */
export async function* generateStream(http: Http, body: GenerateBody, signal?: AbortSignal): AsyncGenerator<GenerateEvent> {
  // Its own controller, so the end of the session (Http.track) stops it like the caller's signal.
  const controller = new AbortController();
  const abort = () => controller.abort();
  if (signal?.aborted) abort();
  signal?.addEventListener("abort", abort, { once: true });
  const untrack = http.track(abort);
  try {
    yield* generateEvents(http, body, controller.signal);
  } finally {
    untrack();
    signal?.removeEventListener("abort", abort);
  }
}

async function* generateEvents(http: Http, body: GenerateBody, signal: AbortSignal): AsyncGenerator<GenerateEvent> {
  const response = await http.send("/api/generate/stream", {
    method: "POST",
    headers: { "content-type": "application/json", accept: "text/event-stream" },
    body: JSON.stringify(body),
    signal,
  });
  if (!response.ok) throw await errorFromResponse(response);
  if (!response.body) throw new ApiError(response.status, "invalid_response", "the generation stream has no body");
  const events = readSse(response.body);
  try {
    for (;;) {
      let next: IteratorResult<SseEvent>;
      try {
        next = await events.next();
      } catch (cause) {
        throw networkError(cause);
      }
      if (next.done) return;
      const { event, data } = next.value;
      if (event === "delta") yield { type: "delta", ...expect(generateDeltaEvent, data) };
      else if (event === "done") yield { type: "done", ...expect(generateDoneEvent, data) };
      else if (event === "error") yield { type: "error", ...expect(generateErrorEvent, data) };
    }
  } finally {
    await events.return(undefined);
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function expect<S extends z.ZodType>(schema: S, data: string): z.output<S> {
  const parsed = schema.safeParse(parseJson(data));
  if (!parsed.success) throw new ApiError(200, "invalid_response", `unexpected generation event: ${data.slice(0, 100)}`);
  return parsed.data;
}
