import { z } from "zod";
import { pageQuery, timestampSchema } from "./pagination.js";

const name = z.string({ error: "name is required" }).trim().min(1, "name is required").max(200, "name is too long");
const description = z.string().trim().max(5_000, "description is too long");

/**
 * An organization's id as identity issues it (apps/identity/src/organizations/): opaque text, no
 * control characters (PostgreSQL text refuses NUL).
 */
export const organizationIdSchema = z
  .string()
  .min(1, "organizationId must not be empty")
  .max(100, "organizationId is too long")
  .regex(/^[^\p{Cc}\p{Cs}]+$/u, "organizationId contains characters an id never has");

/**
 * A project as the API returns it. `organizationId` names the organization that shares it (its
 * members' roles decide access, docs/organizations.md); null for the caller's own project.
 */
export const projectSchema = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  organizationId: z.string().nullable(),
  createdAt: timestampSchema,
  updatedAt: timestampSchema,
});
export type ProjectView = z.infer<typeof projectSchema>;

/** Body of POST /api/projects: with `organizationId`, a project of that organization (its members only). */
export const createProjectBody = z.strictObject({
  name,
  description: description.optional(),
  organizationId: organizationIdSchema.optional(),
});
export type CreateProjectBody = z.infer<typeof createProjectBody>;

/**
 * Body of PATCH /api/projects/:id. `organizationId` moves the project (and everything in it) to
 * that organization: an admin or owner of its organization, or the owner of a personal project,
 * who is a member of the target organization. A project never leaves organizations (no null).
 */
export const updateProjectBody = z
  .strictObject({ name: name.optional(), description: description.nullable().optional(), organizationId: organizationIdSchema.optional() })
  .refine((b) => Object.keys(b).length > 0, { message: "at least one field is required" });
export type UpdateProjectBody = z.infer<typeof updateProjectBody>;

/** Query of GET /api/projects: `?organizationId=` lists that organization's projects (members only); without it, your own. */
export const projectListQuery = pageQuery.extend({ organizationId: organizationIdSchema.optional() });
export type ProjectListQuery = z.infer<typeof projectListQuery>;

/**
 * Query of the lists of what a project holds (GET /api/tasks, /api/chats, /api/agents):
 * `?projectId=` lists that project's rows (an organization's project: every member's); without
 * it, your own rows outside organizations.
 */
export const projectContentQuery = pageQuery.extend({
  projectId: z
    .string()
    .min(1)
    .max(100)
    .regex(/^[^\p{Cc}\p{Cs}]+$/u, "projectId contains characters an id never has")
    .optional(),
});
export type ProjectContentQuery = z.infer<typeof projectContentQuery>;
