import type { TaskEventView } from "@app/contracts";
import type { EventBus } from "./bus.js";

/** An open subscription to one task's events. */
export interface TaskFeed {
  /** Id of the last event delivered (the resume point). */
  lastId(): bigint;
  close(): void;
}

/** Options of {@link openTaskFeed}. */
export interface TaskFeedOptions {
  taskId: string;
  userId: string;
  /** Resume point: deliver stored events after this id first. Absent: only events from now on. */
  afterId?: bigint | undefined;
  deliver(event: TaskEventView): void;
  onError?(error: unknown): void;
}

/**
 * Subscribes to a task's events without gaps or duplicates: listen first (buffering), then read the
 * stored backlog after the resume point, then flush what arrived meanwhile; afterwards deliver
 * live events whose id is above the last one sent. After the bus reconnects, the backlog since the
 * last delivered id is read again. Shared by the SSE stream and the WebSocket.
 */
export async function openTaskFeed(bus: EventBus, options: TaskFeedOptions): Promise<TaskFeed> {
  let last = -1n;
  let buffering = true;
  let closed = false;
  const buffer: TaskEventView[] = [];

  const emit = (event: TaskEventView) => {
    if (closed) return;
    if (event.id !== null) {
      const id = BigInt(event.id);
      if (id <= last) return;
      last = id;
    }
    options.deliver(event);
  };

  const catchUp = async () => {
    const events = await bus.backlog(options.taskId, last);
    for (const e of events) emit(e);
  };

  const unsubscribe = await bus.subscribe(options.taskId, {
    userId: options.userId,
    onEvent: (event) => (buffering ? buffer.push(event) : emit(event)),
    onResync: () => {
      buffering = true;
      catchUp()
        .catch((error: unknown) => options.onError?.(error))
        .finally(() => {
          buffering = false;
          for (const e of buffer.splice(0)) emit(e);
        });
    },
  });
  try {
    if (options.afterId === undefined) {
      last = await bus.latestId(options.taskId);
    } else {
      last = options.afterId;
      await catchUp();
    }
  } catch (error) {
    unsubscribe();
    throw error;
  }
  buffering = false;
  for (const e of buffer.splice(0)) emit(e);
  return {
    lastId: () => last,
    close: () => {
      closed = true;
      unsubscribe();
    },
  };
}

/** Largest bigserial value. */
const MAX_EVENT_ID = 9_223_372_036_854_775_807n;

/** Parses a resume point (`Last-Event-ID` or `lastEventId`): a decimal event id, else undefined. */
export function parseEventId(value: unknown): bigint | undefined {
  if (typeof value !== "string" || !/^\d{1,19}$/.test(value.trim())) return undefined;
  const id = BigInt(value.trim());
  // Beyond PostgreSQL's bigint the id names no event: ignore it rather than fail the query.
  return id <= MAX_EVENT_ID ? id : undefined;
}
