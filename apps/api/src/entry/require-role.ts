import { AppError, type Guard, guard } from "@app/http-kit";
import { requireAuth } from "./stream-auth.js";

/** Where a user's roles are read (admin/roles.ts: the `user_role` rows, never the JWT). */
export type RolesOf = (userId: string) => Promise<readonly string[]>;

/**
 * The role guard of admin routes, placed after `bearer`: reads the caller's roles exactly once
 * per request; 403 `forbidden` without `role`.
 */
export function role(rolesOf: RolesOf, name: string): Guard {
  return guard(`role(${name})`, async (req) => {
    const granted = await rolesOf(requireAuth(req).userId);
    if (!granted.includes(name)) throw new AppError("forbidden", `the ${name} role is required`);
  });
}
