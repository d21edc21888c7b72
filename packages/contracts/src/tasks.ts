import { z } from "zod";
import { timestampSchema } from "./pagination.js";

/** The states of a task. */
export const TASK_STATUSES = ["pending", "running", "completed", "failed", "cancelled"] as const;
export const taskStatusSchema = z.enum(TASK_STATUSES);
export type TaskStatus = z.infer<typeof taskStatusSchema>;

const title = z.string({ error: "title is required" }).trim().min(1, "title is required").max(500, "title is too long");
const description = z.string().trim().max(20_000, "description is too long");

/** A task as the API returns it. */
export const taskSchema = z.object({
  id: z.string(),
  title: z.string(),
  description: z.string().nullable(),
  status: taskStatusSchema,
  projectId: z.string().nullable(),
  createdAt: timestampSchema,
  updatedAt: timestampSchema,
});
export type TaskView = z.infer<typeof taskSchema>;

/** Body of POST /api/tasks: only `title` is required; status starts as `pending`. */
export const createTaskBody = z.strictObject({
  title,
  description: description.optional(),
  status: taskStatusSchema.optional(),
  projectId: z.string().min(1).max(100).nullable().optional(),
});
export type CreateTaskBody = z.infer<typeof createTaskBody>;

/** Body of PATCH /api/tasks/:id: any subset of the fields, at least one. */
export const updateTaskBody = z
  .strictObject({
    title: title.optional(),
    description: description.nullable().optional(),
    status: taskStatusSchema.optional(),
    projectId: z.string().min(1).max(100).nullable().optional(),
  })
  .refine((b) => Object.keys(b).length > 0, { message: "at least one field is required" });
export type UpdateTaskBody = z.infer<typeof updateTaskBody>;

/** An attachment of a task message (an upload; its bytes are at GET /api/uploads/:id). */
export const attachmentSchema = z.object({
  id: z.string(),
  filename: z.string(),
  contentType: z.string(),
  size: z.number().int(),
});
export type AttachmentView = z.infer<typeof attachmentSchema>;

/** Longest task message text. */
export const TASK_MESSAGE_MAX_CHARS = 20_000;

/** A task message. */
export const taskMessageSchema = z.object({
  id: z.string(),
  taskId: z.string(),
  text: z.string(),
  attachments: z.array(attachmentSchema),
  createdAt: timestampSchema,
});
export type TaskMessageView = z.infer<typeof taskMessageSchema>;

/**
 * Body of POST /api/tasks/:id/messages as JSON. The same route accepts `multipart/form-data`
 * with a `text` field and file parts (attachments).
 */
export const createTaskMessageBody = z.strictObject({
  text: z.string({ error: "text is required" }).trim().min(1, "text is required").max(TASK_MESSAGE_MAX_CHARS, "text is too long"),
});
export type CreateTaskMessageBody = z.infer<typeof createTaskMessageBody>;
