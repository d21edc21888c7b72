import { AppError, type Guard, guard } from "@app/http-kit";
import { signedInUser } from "../middleware/guards.js";
import type { AdminRoles } from "./roles.js";

/**
 * 403 `forbidden` unless the signed-in user holds the admin role, read from role_directory on
 * every request (admin/roles.ts). Comes after `signedIn`, which answers 401 without a session.
 * An impersonation session is its user's: it never passes, since admins are never impersonated.
 */
export function adminGuard(roles: AdminRoles): Guard {
  return guard("admin", async (_req, res) => {
    if (!(await roles.isAdmin(signedInUser(res).user.id))) throw new AppError("forbidden", "this needs an admin");
  });
}
