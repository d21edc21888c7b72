import type { TaskEventType, TaskEventView } from "@app/contracts";

const json = new WeakMap<TaskEventView, string>();
const frames = new WeakMap<TaskEventView, Buffer>();

/**
 * The JSON text of an event, computed once per event object: the bus hands the same object to
 * every local subscriber, so a fan-out to N streams serializes it once, not N times.
 */
export function eventJson(event: TaskEventView): string {
  let text = json.get(event);
  if (text === undefined) {
    text = JSON.stringify(event);
    json.set(event, text);
  }
  return text;
}

/** The WebSocket frame payload `{"type":"event","event":...}` of an event, built once per event object. */
export function wsEventFrame(event: TaskEventView): Buffer {
  let frame = frames.get(event);
  if (frame === undefined) {
    frame = Buffer.from(`{"type":"event","event":${eventJson(event)}}`, "utf8");
    frames.set(event, frame);
  }
  return frame;
}

/** A stored `task_event` row (the columns the views need). */
export type EventRow = { id: bigint; taskId: string; type: string; data: unknown; createdAt: Date };

/** The public view of a stored event. */
export function eventView(row: EventRow): TaskEventView {
  return {
    id: row.id.toString(),
    taskId: row.taskId,
    type: row.type as TaskEventType,
    data: row.data,
    createdAt: row.createdAt.toISOString(),
  };
}
