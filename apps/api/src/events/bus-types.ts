import type { TaskEventType, TaskEventView } from "@app/contracts";
import type { PrismaClient } from "@app/db";
import type { Logger } from "pino";

// Types of the event bus (events/bus.ts).

/** What a NOTIFY carries: only the event id (stored events) or a tiny ephemeral event. */
export interface Announcement {
  id?: string;
  taskId: string;
  userId: string;
  type?: TaskEventType;
  data?: unknown;
}

/** A local listener of one task's events. */
export interface TaskListener {
  userId: string;
  /**
   * True for a task of an organization (its project's): every member's events reach the listener,
   * whose user was authorized as a member. Otherwise only the listener's own user's events do.
   */
  shared?: boolean;
  onEvent(event: TaskEventView): void;
  /** Called after the LISTEN connection was re-established: events may have been missed. */
  onResync(): void;
}

/** Options of {@link EventBus}. */
export interface EventBusOptions {
  databaseUrl: string;
  prisma: PrismaClient;
  logger: Logger;
  channel?: string;
  /** How long a subscriber waits for the LISTEN connection (default 5 s), then 503. */
  readyTimeoutMs?: number;
  /** Backoff bounds of reconnects (default 250 ms .. 10 s). */
  minBackoffMs?: number;
  maxBackoffMs?: number;
  /**
   * Liveness probe of the LISTEN connection: a `SELECT 1` this often (default 30 s) that must
   * answer within `heartbeatTimeoutMs` (default 5 s), else the connection is dropped and rebuilt.
   * A connection that died silently (no FIN: a NAT or a failover) would otherwise never notify again.
   */
  heartbeatMs?: number;
  heartbeatTimeoutMs?: number;
  /** More channels LISTENed on the same connection, each with its handler of a notification's payload. */
  channels?: Record<string, (payload: string) => void>;
  /** Called each time the LISTEN connection is re-established (notifications may have been missed). */
  onReconnect?: () => void;
  /**
   * Called each time the LISTEN connection is up, the first time included: work whose outbox may
   * hold rows from before (the user deletion outbox, account/user-deletion.ts) catches up here.
   */
  onListening?: () => void;
}

export interface Waiter {
  resolve(): void;
  reject(error: Error): void;
}
