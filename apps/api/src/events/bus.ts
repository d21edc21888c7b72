import type { TaskEventType, TaskEventView } from "@app/contracts";
import type { Prisma, PrismaClient } from "@app/db";
import { AppError } from "@app/http-kit";
import type pg from "pg";
import type { Logger } from "pino";
import { backlogWithin } from "./backlog-page.js";
import type { Announcement, EventBusOptions, TaskListener, Waiter } from "./bus-types.js";
import { eventView } from "./event-json.js";
import { EVENT_BUS_APPLICATION_NAME, endClient, listenClient, probeConnection } from "./listen-connection.js";

export type { EventBusOptions, TaskListener };
export { EVENT_BUS_APPLICATION_NAME };

/** The PostgreSQL channel task events are announced on. */
export const TASK_EVENTS_CHANNEL = "task_events";

/**
 * Cross-instance fan-out of task events through PostgreSQL LISTEN/NOTIFY, no other
 * infrastructure. Events are rows of `task_event` (bigserial id = resume point); the NOTIFY sent
 * in the same transaction carries only ids. One dedicated connection per process LISTENs and
 * reconnects with exponential backoff (TCP keep-alive and a periodic `SELECT 1` detect a dead
 * connection); after a reconnect every listener is told to catch up from its last event id. Each
 * announcement is read once (only when a local listener wants that task) and fanned out in
 * process, in announcement order.
 */
export class EventBus {
  readonly #opts: Required<Omit<EventBusOptions, "prisma" | "logger" | "channels" | "onReconnect" | "onListening">>;
  readonly #channels: Map<string, (payload: string) => void>;
  readonly #onReconnect: (() => void) | undefined;
  readonly #onListening: (() => void) | undefined;
  readonly #prisma: PrismaClient;
  readonly #logger: Logger;
  readonly #listeners = new Map<string, Set<TaskListener>>();
  #client: pg.Client | undefined;
  #connected = false;
  #closed = false;
  #everConnected = false;
  #attempt = 0;
  #retryTimer: NodeJS.Timeout | undefined;
  #heartbeat: NodeJS.Timeout | undefined;
  #waiters: Waiter[] = [];
  #chain: Promise<void> = Promise.resolve();

  constructor(options: EventBusOptions) {
    this.#opts = {
      databaseUrl: options.databaseUrl,
      channel: options.channel ?? TASK_EVENTS_CHANNEL,
      readyTimeoutMs: options.readyTimeoutMs ?? 5_000,
      minBackoffMs: options.minBackoffMs ?? 250,
      maxBackoffMs: options.maxBackoffMs ?? 10_000,
      heartbeatMs: options.heartbeatMs ?? 30_000,
      heartbeatTimeoutMs: options.heartbeatTimeoutMs ?? 5_000,
    };
    this.#prisma = options.prisma;
    this.#logger = options.logger;
    this.#channels = new Map(Object.entries(options.channels ?? {}));
    this.#onReconnect = options.onReconnect;
    this.#onListening = options.onListening;
  }

  /** True while the LISTEN connection is up. */
  get connected(): boolean {
    return this.#connected;
  }

  /** Starts listening (retrying in the background); resolves once connected or after `readyTimeoutMs`. */
  async start(): Promise<void> {
    if (!this.#client && !this.#retryTimer) void this.#connect();
    await this.ready().catch(() => undefined);
  }

  /**
   * Resolves when the LISTEN connection is up; 503 `service_unavailable` after `readyTimeoutMs`,
   * or at once when the bus is (or gets) closed.
   */
  ready(): Promise<void> {
    if (this.#connected) return Promise.resolve();
    if (this.#closed) return Promise.reject(new AppError("service_unavailable", "event bus is closed"));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiters = this.#waiters.filter((w) => w !== waiter);
        reject(new AppError("service_unavailable", "event delivery is unavailable"));
      }, this.#opts.readyTimeoutMs);
      const waiter: Waiter = {
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      };
      this.#waiters.push(waiter);
    });
  }

  /** Registers a listener for one task's events (after the bus is ready); returns the unsubscribe function. */
  async subscribe(taskId: string, listener: TaskListener): Promise<() => void> {
    await this.ready();
    let set = this.#listeners.get(taskId);
    if (!set) {
      set = new Set();
      this.#listeners.set(taskId, set);
    }
    set.add(listener);
    return () => {
      const current = this.#listeners.get(taskId);
      current?.delete(listener);
      if (current?.size === 0) this.#listeners.delete(taskId);
    };
  }

  /** Number of local listeners (diagnostics and tests). */
  listenerCount(): number {
    let n = 0;
    for (const set of this.#listeners.values()) n += set.size;
    return n;
  }

  /**
   * Stores an event and announces it, inside the caller's transaction (the NOTIFY is delivered at
   * commit, never for a rolled-back change). The caller must have locked the task row first, so the
   * ids of one task commit in order.
   */
  async append(
    tx: Prisma.TransactionClient,
    event: { taskId: string; userId: string; type: TaskEventType; data: Prisma.InputJsonValue },
  ): Promise<TaskEventView> {
    const row = await tx.taskEvent.create({ data: event });
    await this.announce(tx, { id: row.id.toString(), taskId: row.taskId, userId: row.userId });
    return eventView(row);
  }

  /** Sends an announcement (an event id, or a small ephemeral event such as `task.deleted`). */
  async announce(tx: Prisma.TransactionClient | PrismaClient, announcement: Announcement): Promise<void> {
    await tx.$executeRaw`SELECT pg_notify(${this.#opts.channel}, ${JSON.stringify(announcement)})`;
  }

  /** Announces `task.deleted` for many tasks at once (a project's or an organization's), a statement per 500. */
  async announceDeleted(tx: Prisma.TransactionClient, tasks: ReadonlyArray<{ id: string; userId: string }>): Promise<void> {
    for (let i = 0; i < tasks.length; i += 500) {
      const notes = tasks
        .slice(i, i + 500)
        .map((t) => JSON.stringify({ taskId: t.id, userId: t.userId, type: "task.deleted", data: { id: t.id } }));
      await tx.$executeRaw`SELECT pg_notify(${this.#opts.channel}, note) FROM unnest(${notes}::text[]) AS note`;
    }
  }

  /**
   * One page of a task's stored events after `afterId`, oldest first (keyset by event id). Each page
   * is one short query, so a long catch-up holds no pool connection between pages. With `maxBytes`,
   * the page stops before the event that would take it past that many bytes of JSON (the first
   * event always comes), so a page never holds more than its reader has room for.
   */
  async backlog(taskId: string, afterId: bigint, limit: number, maxBytes?: number): Promise<TaskEventView[]> {
    if (maxBytes !== undefined) return backlogWithin(this.#prisma, taskId, afterId, limit, maxBytes);
    const rows = await this.#prisma.taskEvent.findMany({ where: { taskId, id: { gt: afterId } }, orderBy: { id: "asc" }, take: limit });
    return rows.map(eventView);
  }

  /** True when more than `count` events of a task are stored after `afterId` (reads at most count + 1 ids). */
  async backlogExceeds(taskId: string, afterId: bigint, count: number): Promise<boolean> {
    const row = await this.#prisma.taskEvent.findFirst({
      where: { taskId, id: { gt: afterId } },
      orderBy: { id: "asc" },
      skip: count,
      select: { id: true },
    });
    return row !== null;
  }

  /** The newest stored event id of a task (0 when none): where a fresh subscription starts. */
  async latestId(taskId: string): Promise<bigint> {
    const row = await this.#prisma.taskEvent.findFirst({ where: { taskId }, orderBy: { id: "desc" }, select: { id: true } });
    return row?.id ?? 0n;
  }

  /** Stops listening, forgets all listeners and fails every pending {@link ready} with 503. */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#retryTimer);
    clearTimeout(this.#heartbeat);
    this.#listeners.clear();
    for (const waiter of this.#waiters.splice(0)) waiter.reject(new AppError("service_unavailable", "event bus is closed"));
    const client = this.#client;
    this.#client = undefined;
    this.#connected = false;
    if (client) await endClient(client, this.#opts.heartbeatTimeoutMs);
  }

  async #connect(): Promise<void> {
    this.#retryTimer = undefined;
    if (this.#closed) return;
    const client = listenClient(this.#opts.databaseUrl);
    this.#client = client;
    let failed = false;
    const onDown = (error?: Error) => {
      if (failed) return;
      failed = true;
      this.#connected = false;
      clearTimeout(this.#heartbeat);
      this.#heartbeat = undefined;
      if (this.#client === client) this.#client = undefined;
      client.end().catch(() => undefined);
      if (this.#closed) return;
      this.#logger.warn({ err: error?.message }, "event bus connection lost; reconnecting");
      this.#scheduleReconnect();
    };
    client.on("error", onDown);
    client.on("end", () => onDown());
    client.on("notification", (msg) => {
      const other = this.#channels.get(msg.channel);
      if (other) return void this.#safely(() => other(msg.payload ?? ""));
      if (msg.channel !== this.#opts.channel || !msg.payload) return;
      const payload = msg.payload;
      this.#chain = this.#chain
        .then(() => this.#dispatch(payload))
        .catch((err: Error) => {
          this.#logger.warn({ err: err.message }, "event dispatch failed");
        });
    });
    try {
      await client.connect();
      for (const channel of [this.#opts.channel, ...this.#channels.keys()])
        await client.query(`LISTEN ${client.escapeIdentifier(channel)}`);
    } catch (error) {
      onDown(error as Error);
      return;
    }
    if (this.#closed || failed) return;
    this.#connected = true;
    this.#attempt = 0;
    const reconnected = this.#everConnected;
    this.#everConnected = true;
    this.#logger.info({ channel: this.#opts.channel, reconnected }, "event bus listening");
    this.#scheduleProbe(client, onDown);
    for (const waiter of this.#waiters.splice(0)) waiter.resolve();
    if (this.#onListening) this.#safely(this.#onListening);
    if (reconnected) {
      if (this.#onReconnect) this.#safely(this.#onReconnect);
      for (const set of this.#listeners.values()) for (const l of set) l.onResync();
    }
  }

  /** Runs a handler; a throwing one is logged, never allowed to break the connection's event loop. */
  #safely(handler: () => void): void {
    try {
      handler();
    } catch (error) {
      this.#logger.warn({ err: (error as Error).message }, "event bus handler failed");
    }
  }

  /** Arms the next liveness probe of this connection (one at a time: the next is armed when one passed). */
  #scheduleProbe(client: pg.Client, onDown: (error?: Error) => void): void {
    this.#heartbeat = setTimeout(async () => {
      const failure = await probeConnection(client, this.#opts.heartbeatTimeoutMs);
      if (failure) {
        onDown(failure);
        client.connection.stream.destroy();
      } else if (this.#client === client && !this.#closed) {
        this.#scheduleProbe(client, onDown);
      }
    }, this.#opts.heartbeatMs);
    this.#heartbeat.unref();
  }

  #scheduleReconnect(): void {
    if (this.#retryTimer || this.#closed) return;
    const delay = Math.min(this.#opts.maxBackoffMs, this.#opts.minBackoffMs * 2 ** this.#attempt);
    this.#attempt += 1;
    this.#retryTimer = setTimeout(() => void this.#connect(), delay);
    this.#retryTimer.unref();
  }

  async #dispatch(payload: string): Promise<void> {
    let note: Announcement;
    try {
      note = JSON.parse(payload) as Announcement;
    } catch {
      return;
    }
    const listeners = this.#listeners.get(note.taskId);
    if (!listeners || listeners.size === 0) return;
    let event: TaskEventView | undefined;
    if (note.id !== undefined) {
      const row = await this.#prisma.taskEvent.findUnique({ where: { id: BigInt(note.id) } });
      if (!row) return;
      event = eventView(row);
    } else if (note.type) {
      event = { id: null, taskId: note.taskId, type: note.type, data: note.data ?? null, createdAt: new Date().toISOString() };
    }
    if (!event) return;
    for (const listener of [...listeners]) {
      if (!listener.shared && listener.userId !== note.userId) continue;
      try {
        listener.onEvent(event);
      } catch (error) {
        this.#logger.warn({ err: (error as Error).message }, "event listener failed");
      }
    }
  }
}
