import { ADMIN_ROLE, adminUserSchema, idParams, pageQuery, setRolesBody, userRolesSchema } from "@app/contracts";
import type { Authenticate } from "../entry/authenticate.js";
import { streamAuth } from "../entry/stream-auth.js";
import { pageResponse } from "../lib/pagination.js";
import type { ApiRoutes } from "../lib/registry.js";
import { requireRole } from "../middleware/require-role.js";
import type { RolesService } from "../services/roles.js";

/**
 * /api/admin/*: bearer authentication, then the roles middleware (one user_role read, 403
 * without "admin"), then JSON routes: list users with roles, replace a user's roles. Users come
 * from the user_directory projection, the only user data the API's database role can read.
 */
export function adminRoutes(api: ApiRoutes, deps: { roles: RolesService; authenticate: Authenticate }): void {
  api.router.use("/api/admin", streamAuth(deps.authenticate), requireRole(deps.roles, ADMIN_ROLE));
  api.json(
    "get",
    "/api/admin/users",
    { tag: "admin", summary: "List users with their roles (admin only)", paginated: true },
    {
      auth: true,
      query: pageQuery,
      response: adminUserSchema.array(),
      handler: async (ctx) => pageResponse(await deps.roles.listUsers(ctx.query), ctx),
    },
  );
  api.json(
    "put",
    "/api/admin/users/:id/roles",
    { tag: "admin", summary: "Replace a user's roles (admin only; 409 if no admin would remain)" },
    {
      auth: true,
      params: idParams,
      body: setRolesBody,
      response: userRolesSchema,
      handler: (ctx) => deps.roles.setRoles(ctx.params.id, ctx.body.roles),
    },
  );
}
