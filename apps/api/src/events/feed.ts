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
 * Subscribes to a task's events without gaps or duplicates: fix the starting point (the resume
 * point, or the newest stored id), listen (buffering), read the stored backlog after the starting
 * point, then flush what arrived meanwhile; afterwards deliver live events whose id is above the
 * last one sent. After the bus reconnects, the backlog since the last delivered id is read again
 * (catch-ups run one at a time, after the first). Shared by the SSE stream and the WebSocket.
 */
export async function openTaskFeed(bus: EventBus, options: TaskFeedOptions): Promise<TaskFeed> {
  let last = -1n;
  let closed = false;
  // Catch-ups in flight (the first read, and one per bus reconnect): live events wait meanwhile.
  let catchingUp = 1;
  let chain: Promise<void> = Promise.resolve();
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

  const settled = () => {
    catchingUp -= 1;
    if (catchingUp === 0) for (const e of buffer.splice(0)) emit(e);
  };

  // The starting point is fixed before listening; everything stored after it is read once the
  // listener is in place, so an event committed between the two is delivered, not skipped.
  last = options.afterId ?? (await bus.latestId(options.taskId));
  const unsubscribe = await bus.subscribe(options.taskId, {
    userId: options.userId,
    onEvent: (event) => (catchingUp > 0 ? buffer.push(event) : emit(event)),
    onResync: () => {
      // Events may have been announced while the LISTEN connection was down: read what was stored
      // after the last delivered id, after any catch-up already running (one at a time, in order).
      catchingUp += 1;
      chain = chain
        .then(catchUp)
        .catch((error: unknown) => options.onError?.(error))
        .finally(settled);
    },
  });
  const first = catchUp();
  chain = first.then(
    () => undefined,
    () => undefined,
  );
  try {
    await first;
  } catch (error) {
    closed = true;
    unsubscribe();
    throw error;
  }
  settled();
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
