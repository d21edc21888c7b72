import { z } from "zod";
import { timestampSchema } from "./pagination.js";

const name = z.string({ error: "name is required" }).trim().min(1, "name is required").max(200, "name is too long");
const description = z.string().trim().max(5_000, "description is too long");

/** A project as the API returns it. */
export const projectSchema = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  createdAt: timestampSchema,
  updatedAt: timestampSchema,
});
export type ProjectView = z.infer<typeof projectSchema>;

/** Body of POST /api/projects. */
export const createProjectBody = z.strictObject({ name, description: description.optional() });
export type CreateProjectBody = z.infer<typeof createProjectBody>;

/** Body of PATCH /api/projects/:id. */
export const updateProjectBody = z
  .strictObject({ name: name.optional(), description: description.nullable().optional() })
  .refine((b) => Object.keys(b).length > 0, { message: "at least one field is required" });
export type UpdateProjectBody = z.infer<typeof updateProjectBody>;
