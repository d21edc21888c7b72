import type { TaskEventView } from "@app/contracts";
import type { PrismaClient } from "@app/db";
import { eventView } from "./event-json.js";

/** Bytes an event's frame adds to its data (id, task id, type, timestamp, framing), for page sizes. */
const EVENT_OVERHEAD_BYTES = 200;

/**
 * One page of a task's stored events after `afterId` (at most `limit`, oldest first) that stops
 * before the event that would take it past `maxBytes` of JSON; the first event always comes. The
 * page is walked one event at a time along the (task_id, id) index and the walk stops at the
 * budget, so only the events returned (and the one that ends the walk) are measured, however large
 * the backlog or its events.
 */
export async function backlogWithin(
  prisma: PrismaClient,
  taskId: string,
  afterId: bigint,
  limit: number,
  maxBytes: number,
): Promise<TaskEventView[]> {
  const rows = await prisma.$queryRaw<Array<{ id: bigint; task_id: string; type: string; data: unknown; created_at: Date }>>`
    WITH RECURSIVE walk (id, total, n) AS (
      (SELECT id, octet_length(data::text) + ${EVENT_OVERHEAD_BYTES}::int, 1
       FROM task_event WHERE task_id = ${taskId} AND id > ${afterId} ORDER BY id LIMIT 1)
      UNION ALL
      (SELECT next.id, walk.total + octet_length(next.data::text) + ${EVENT_OVERHEAD_BYTES}::int, walk.n + 1
       FROM walk CROSS JOIN LATERAL (
         SELECT id, data FROM task_event WHERE task_id = ${taskId} AND id > walk.id ORDER BY id LIMIT 1
       ) next
       WHERE walk.total < ${maxBytes} AND walk.n < ${limit})
    )
    SELECT e.id, e.task_id, e.type, e.data, e.created_at FROM walk JOIN task_event e ON e.id = walk.id ORDER BY e.id`;
  return rows.map((r) => eventView({ id: r.id, taskId: r.task_id, type: r.type, data: r.data, createdAt: r.created_at }));
}
