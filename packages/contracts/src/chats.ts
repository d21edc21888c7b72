import { z } from "zod";
import { timestampSchema } from "./pagination.js";

const title = z.string().trim().min(1, "title must not be empty").max(300, "title is too long");
const ref = z.string().min(1).max(100).nullable();

/** A chat as the API returns it. */
export const chatSchema = z.object({
  id: z.string(),
  title: z.string(),
  projectId: z.string().nullable(),
  agentId: z.string().nullable(),
  createdAt: timestampSchema,
  updatedAt: timestampSchema,
});
export type ChatView = z.infer<typeof chatSchema>;

/** Body of POST /api/chats (title defaults to "New chat"). */
export const createChatBody = z.strictObject({ title: title.optional(), projectId: ref.optional(), agentId: ref.optional() });
export type CreateChatBody = z.infer<typeof createChatBody>;

/** Body of PATCH /api/chats/:id. */
export const updateChatBody = z
  .strictObject({ title: title.optional(), projectId: ref.optional(), agentId: ref.optional() })
  .refine((b) => Object.keys(b).length > 0, { message: "at least one field is required" });
export type UpdateChatBody = z.infer<typeof updateChatBody>;

/** Who wrote a chat message. */
export const chatRoleSchema = z.enum(["user", "assistant", "system"]);
export type ChatRole = z.infer<typeof chatRoleSchema>;

/** A chat message. */
export const chatMessageSchema = z.object({
  id: z.string(),
  chatId: z.string(),
  role: chatRoleSchema,
  content: z.string(),
  createdAt: timestampSchema,
});
export type ChatMessageView = z.infer<typeof chatMessageSchema>;

/** Body of POST /api/chats/:id/messages (role defaults to "user"). */
export const createChatMessageBody = z.strictObject({
  role: chatRoleSchema.optional(),
  content: z.string({ error: "content is required" }).min(1, "content is required").max(100_000, "content is too long"),
});
export type CreateChatMessageBody = z.infer<typeof createChatMessageBody>;
