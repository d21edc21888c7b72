import { z } from "zod";
import { timestampSchema } from "./pagination.js";

/** Kinds of task events carried by the SSE stream and the WebSocket. */
export const TASK_EVENT_TYPES = ["message.created", "task.updated", "task.deleted"] as const;
export const taskEventTypeSchema = z.enum(TASK_EVENT_TYPES);
export type TaskEventType = z.infer<typeof taskEventTypeSchema>;

/**
 * One task event. `id` is the durable, increasing event id (the SSE `id:` line and the value to
 * resume from with `Last-Event-ID` or the WebSocket `lastEventId`); `null` for `task.deleted`,
 * which is not stored (the task's log goes with it). `data` is the message or the task.
 */
export const taskEventSchema = z.object({
  id: z.string().nullable(),
  taskId: z.string(),
  type: taskEventTypeSchema,
  data: z.unknown(),
  createdAt: timestampSchema,
});
export type TaskEventView = z.infer<typeof taskEventSchema>;

/** Path of the WebSocket upgrade; the JWT travels as `?token=`. */
export const WS_PATH = "/api/ws";

const eventId = z
  .string()
  .regex(/^\d{1,19}$/, "an event id is a decimal integer")
  .refine((v) => !/^\d{1,19}$/.test(v) || BigInt(v) <= 9_223_372_036_854_775_807n, "an event id is at most 9223372036854775807");

/** Messages a WebSocket client sends (JSON text frames). */
export const wsClientMessage = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("subscribe"), taskId: z.string().min(1).max(100), lastEventId: eventId.optional() }),
  z.strictObject({ type: z.literal("unsubscribe"), taskId: z.string().min(1).max(100) }),
  z.strictObject({ type: z.literal("ping") }),
]);
export type WsClientMessage = z.infer<typeof wsClientMessage>;

/** Messages the server sends on the WebSocket (JSON text frames). */
export const wsServerMessage = z.discriminatedUnion("type", [
  z.object({ type: z.literal("ready"), userId: z.string() }),
  z.object({ type: z.literal("subscribed"), taskId: z.string() }),
  z.object({ type: z.literal("unsubscribed"), taskId: z.string() }),
  z.object({ type: z.literal("event"), event: taskEventSchema }),
  z.object({ type: z.literal("error"), code: z.string(), message: z.string(), taskId: z.string().optional() }),
  z.object({ type: z.literal("pong") }),
]);
export type WsServerMessage = z.infer<typeof wsServerMessage>;
