import { z } from "zod";
import { timestampSchema } from "./pagination.js";

const name = z.string({ error: "name is required" }).trim().min(1, "name is required").max(200, "name is too long");
const instructions = z.string().max(50_000, "instructions are too long");
const model = z.string().trim().min(1).max(200);
const projectId = z.string().min(1).max(100).nullable();

/** An agent as the API returns it. */
export const agentSchema = z.object({
  id: z.string(),
  name: z.string(),
  instructions: z.string().nullable(),
  model: z.string().nullable(),
  projectId: z.string().nullable(),
  createdAt: timestampSchema,
  updatedAt: timestampSchema,
});
export type AgentView = z.infer<typeof agentSchema>;

/** Body of POST /api/agents. */
export const createAgentBody = z.strictObject({
  name,
  instructions: instructions.optional(),
  model: model.optional(),
  projectId: projectId.optional(),
});
export type CreateAgentBody = z.infer<typeof createAgentBody>;

/** Body of PATCH /api/agents/:id. */
export const updateAgentBody = z
  .strictObject({
    name: name.optional(),
    instructions: instructions.nullable().optional(),
    model: model.nullable().optional(),
    projectId: projectId.optional(),
  })
  .refine((b) => Object.keys(b).length > 0, { message: "at least one field is required" });
export type UpdateAgentBody = z.infer<typeof updateAgentBody>;
