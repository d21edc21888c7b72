import { z } from "zod";
import { timestampSchema } from "./pagination.js";

/** The role that opens /api/admin/*. */
export const ADMIN_ROLE = "admin";

/**
 * The roles the product knows, for pickers (the web app's admin page). The API stores any
 * {@link roleSchema} name; only these have a meaning today.
 */
export const KNOWN_ROLES = [ADMIN_ROLE] as const;

/** A role name: lower-case letters, digits, `_` and `-`. */
export const roleSchema = z.string().regex(/^[a-z][a-z0-9_-]{0,31}$/, "a role is 1-32 lower-case letters, digits, _ or -");

/** A user as admin routes list it, with the roles read from user_role. */
export const adminUserSchema = z.object({
  id: z.string(),
  email: z.string(),
  name: z.string(),
  createdAt: timestampSchema,
  roles: z.array(z.string()),
});
export type AdminUserView = z.infer<typeof adminUserSchema>;

/** Body of PUT /api/admin/users/:id/roles: the complete new role set. */
export const setRolesBody = z.strictObject({
  roles: z
    .array(roleSchema)
    .max(16, "at most 16 roles")
    .transform((roles) => [...new Set(roles)].sort()),
});
export type SetRolesBody = z.infer<typeof setRolesBody>;

/** Body of PUT /api/admin/users/:id/roles responses. */
export const userRolesSchema = z.object({ id: z.string(), roles: z.array(z.string()) });
export type UserRolesView = z.infer<typeof userRolesSchema>;
