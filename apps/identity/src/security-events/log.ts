import {
  type AdminEventsQuery,
  type AdminEventView,
  isStorableTime,
  SECURITY_EVENTS_PAGE_SIZE,
  type SecurityEventOutcome,
  type SecurityEventType,
  type SecurityEventView,
} from "@app/contracts";
import { Prisma, type PrismaClient } from "@app/db";
import { decodeEventCursor, encodeEventCursor } from "./cursor.js";

/** An auth_event row as the page query reads it. */
interface EventRow {
  id: string;
  type: SecurityEventType;
  user_id: string | null;
  actor_id: string | null;
  ip: string | null;
  user_agent: string | null;
  outcome: SecurityEventOutcome;
  method: string | null;
  detail: Record<string, string | number | boolean | null> | null;
  created_at: Date;
}

/** One page of events and the cursor of the next. */
export interface EventPage<T> {
  events: T[];
  nextCursor: string | null;
}

const DAY_MS = 24 * 60 * 60 * 1000;
const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/** The event as its user reads it: no user id (it is theirs), optional fields only when set. */
function userView(row: EventRow): SecurityEventView {
  return {
    id: row.id,
    type: row.type,
    createdAt: row.created_at.toISOString(),
    ip: row.ip,
    userAgent: row.user_agent,
    outcome: row.outcome,
    ...(row.actor_id ? { actorId: row.actor_id } : {}),
    ...(row.method ? { method: row.method } : {}),
    ...(row.detail && typeof row.detail === "object" && !Array.isArray(row.detail) ? { detail: row.detail } : {}),
  };
}

function adminView(row: EventRow): AdminEventView {
  return { ...userView(row), userId: row.user_id };
}

/**
 * Reads the security event log (table auth_event, written by record.ts in each action's
 * transaction): pages newest first by (created_at, id), one keyset query each, on the indexes
 * (user_id, created_at desc, id desc) and (created_at desc, id desc).
 */
export class EventLog {
  readonly #db: PrismaClient;

  constructor(prisma: PrismaClient) {
    this.#db = prisma;
  }

  /** A page of the user's own events. */
  forUser(userId: string, query: { cursor?: string | undefined; limit?: number | undefined }): Promise<EventPage<SecurityEventView>> {
    return this.#page([Prisma.sql`"user_id" = ${userId}`], query, userView);
  }

  /** A page of every event (those of no user included) matching the admin's filters. */
  forAdmin(query: AdminEventsQuery): Promise<EventPage<AdminEventView>> {
    const where: Prisma.Sql[] = [];
    if (query.userId !== undefined) where.push(Prisma.sql`"user_id" = ${query.userId}`);
    if (query.actorId !== undefined) where.push(Prisma.sql`"actor_id" = ${query.actorId}`);
    if (query.type?.length) where.push(Prisma.sql`"type" IN (${Prisma.join([...new Set(query.type)])})`);
    if (query.outcome !== undefined) where.push(Prisma.sql`"outcome" = ${query.outcome}`);
    if (query.ip !== undefined) where.push(Prisma.sql`"ip" = ${query.ip}`);
    if (query.from !== undefined) where.push(Prisma.sql`"created_at" >= ${new Date(query.from)}`);
    if (query.to !== undefined) {
      // A date alone names the whole day: events before the next midnight (UTC).
      // The day after 9999-12-31 is past what a timestamp holds: every event is before it.
      const to = DATE_ONLY.test(query.to) ? Date.parse(query.to) + DAY_MS : Date.parse(query.to);
      if (isStorableTime(to)) where.push(Prisma.sql`"created_at" < ${new Date(to)}`);
    }
    return this.#page(where, query, adminView);
  }

  async #page<T>(
    where: Prisma.Sql[],
    query: { cursor?: string | undefined; limit?: number | undefined },
    view: (row: EventRow) => T,
  ): Promise<EventPage<T>> {
    const limit = query.limit ?? SECURITY_EVENTS_PAGE_SIZE;
    const after = decodeEventCursor(query.cursor);
    const conditions = after ? [...where, Prisma.sql`("created_at", "id") < (${after.createdAt}, ${after.id})`] : where;
    const filter = conditions.length ? Prisma.sql`WHERE ${Prisma.join(conditions, " AND ")}` : Prisma.empty;
    const rows = await this.#db.$queryRaw<EventRow[]>`
      SELECT "id", "type", "user_id", "actor_id", "ip", "user_agent", "outcome", "method", "detail", "created_at"
      FROM "auth_event" ${filter}
      ORDER BY "created_at" DESC, "id" DESC
      LIMIT ${limit + 1}`;
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return {
      events: page.map(view),
      nextCursor: rows.length > limit && last ? encodeEventCursor({ createdAt: last.created_at, id: last.id }) : null,
    };
  }
}
