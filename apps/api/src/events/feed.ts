import type { TaskEventView } from "@app/contracts";
import type { EventBus } from "./bus.js";

/** An open subscription to one task's events. */
export interface TaskFeed {
  /** Id of the last event delivered (the resume point). */
  lastId(): bigint;
  close(): void;
}

/** Events read per backlog query: one short query per page, never the whole history at once. */
export const BACKLOG_PAGE_SIZE = 50;

/**
 * How a consumer paces a catch-up so that it holds at most its buffer budget (SSE stream or
 * WebSocket): `enter` reserves room for one catch-up in the instance's budget (lib/resume-budget.ts)
 * and resolves with its release, or undefined when there is none in time (then the backlog is
 * skipped with `onResync`); `room` waits until the consumer's socket holds less than its budget
 * unsent and resolves with the bytes it may take now, which bound the next page (0: it is closed).
 */
export interface ResumeGate {
  enter(): Promise<(() => void) | undefined>;
  room(): Promise<number>;
}

/** Options of {@link openTaskFeed}. */
export interface TaskFeedOptions {
  taskId: string;
  userId: string;
  /** A task of an organization: every member's events are delivered (events/bus-types.ts, TaskListener). */
  shared?: boolean | undefined;
  /** Resume point: deliver stored events after this id first. Absent: only events from now on. */
  afterId?: bigint | undefined;
  /**
   * Delivers one event. A returned promise paces the catch-up: the next stored event is read and
   * delivered only once it settles (the SSE stream resolves it when its socket buffer has room).
   */
  deliver(event: TaskEventView): unknown;
  /**
   * Most stored events a catch-up replays. When more are stored after the resume point, none is
   * replayed: `onResync` is called with the newest id and delivery continues live from there (the
   * client refetches the task instead). Unset: no limit.
   */
  maxResumeEvents?: number | undefined;
  /** `deep`: more than `maxResumeEvents` stored; `busy`: no room in the instance's resume budget in time. */
  onResync?(latestId: bigint, why: "deep" | "busy"): void | Promise<void>;
  /** Paces catch-ups by the consumer's buffer and the instance's resume budget. Unset: pages of {@link BACKLOG_PAGE_SIZE}. */
  resume?: ResumeGate | undefined;
  /** Called once the listener is in place, before the backlog is read (the SSE route starts its response here). */
  onListening?(): void;
  /** Aborting stops a catch-up in progress (the client left). */
  signal?: AbortSignal | undefined;
  onError?(error: unknown): void;
}

/**
 * Subscribes to a task's events without gaps or duplicates: fix the starting point (the resume
 * point, or the newest stored id), listen (buffering), read the stored backlog after the starting
 * point page by page, then flush what arrived meanwhile; afterwards deliver live events whose id is
 * above the last one sent. After the bus reconnects, the backlog since the last delivered id is
 * read again (catch-ups run one at a time, after the first). A backlog deeper than
 * `maxResumeEvents` is skipped with `onResync`. With `resume`, a catch-up runs only with room in
 * the instance's budget, and each page is read only once the consumer has room for it and holds at
 * most that many bytes, so events read and not yet sent never exceed the consumer's budget.
 * Shared by the SSE stream and the WebSocket.
 */
export async function openTaskFeed(bus: EventBus, options: TaskFeedOptions): Promise<TaskFeed> {
  let last = -1n;
  let closed = false;
  // Catch-ups in flight (the first read, and one per bus reconnect): live events wait meanwhile.
  let catchingUp = 1;
  let chain: Promise<void> = Promise.resolve();
  const buffer: TaskEventView[] = [];
  const stopped = () => closed || options.signal?.aborted === true;

  const emit = async (event: TaskEventView) => {
    if (stopped()) return;
    if (event.id !== null) {
      const id = BigInt(event.id);
      if (id <= last) return;
      last = id;
    }
    await options.deliver(event);
  };

  // Skips the backlog: the client refetches, and delivery goes on from the newest id.
  const resync = async (why: "deep" | "busy") => {
    const latest = await bus.latestId(options.taskId);
    if (latest > last) last = latest;
    if (!stopped()) await options.onResync?.(last, why);
  };

  const catchUp = async () => {
    const max = options.maxResumeEvents;
    if (max !== undefined && (await bus.backlogExceeds(options.taskId, last, max))) return resync("deep");
    const gate = options.resume;
    if (!gate) return replay(undefined);
    // Nothing stored after the starting point (a fresh subscription): no room needed.
    if (!(await bus.backlogExceeds(options.taskId, last, 0))) return;
    const leave = await gate.enter();
    if (!leave) return stopped() ? undefined : resync("busy");
    try {
      await replay(gate);
    } finally {
      leave();
    }
  };

  const replay = async (gate: ResumeGate | undefined) => {
    for (;;) {
      if (stopped()) return;
      const room = gate ? await gate.room() : undefined;
      if (room === 0 || stopped()) return;
      const page = await bus.backlog(options.taskId, last, BACKLOG_PAGE_SIZE, room);
      for (const e of page) await emit(e);
      if (page.length === 0 || (room === undefined && page.length < BACKLOG_PAGE_SIZE)) return;
    }
  };

  // Ends a catch-up; the last one running flushes the live events buffered meanwhile (events
  // buffered during the flush's own awaits are flushed too, so order is kept).
  const settled = async () => {
    if (catchingUp === 1) for (let e = buffer.shift(); e; e = buffer.shift()) await emit(e);
    catchingUp -= 1;
  };

  // The starting point is fixed before listening; everything stored after it is read once the
  // listener is in place, so an event committed between the two is delivered, not skipped.
  last = options.afterId ?? (await bus.latestId(options.taskId));
  const unsubscribe = await bus.subscribe(options.taskId, {
    userId: options.userId,
    shared: options.shared === true,
    onEvent: (event) => {
      if (catchingUp > 0) buffer.push(event);
      else void Promise.resolve(emit(event)).catch((error: unknown) => options.onError?.(error));
    },
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
  const close = () => {
    closed = true;
    unsubscribe();
  };
  options.signal?.addEventListener("abort", close, { once: true });
  options.onListening?.();
  const first = catchUp();
  // Catch-ups run one at a time: one started by a bus reconnect waits for this one and its flush.
  const opened = first.then(settled);
  chain = opened.catch(() => undefined);
  try {
    await opened;
  } catch (error) {
    close();
    throw error;
  }
  return { lastId: () => last, close };
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
