import { ADMIN_ROLE, adminUserSchema, idParams, pageQuery, setRolesBody, userRolesSchema } from "@app/contracts";
import { type AnyRoute, defineRoute, type Guard } from "@app/http-kit";
import { jsonBody } from "../entry/body.js";
import { role } from "../entry/require-role.js";
import { pageResponse } from "../lib/pagination.js";
import type { RolesService } from "./roles.js";

/**
 * /api/admin/*: bearer authentication, then the role guard (one user_role read, 403 without
 * "admin"), then JSON routes: list users with roles, replace a user's roles. Users come from the
 * user_directory projection, the only user data the API's database role can read.
 */
export function adminRoutes(bearer: Guard, roles: RolesService): AnyRoute[] {
  const admin = role((userId) => roles.rolesOf(userId), ADMIN_ROLE);
  return [
    defineRoute({
      method: "get",
      path: "/api/admin/users",
      tag: "admin",
      summary: "List users with their roles (admin only)",
      paginated: true,
      query: pageQuery,
      response: adminUserSchema.array(),
      guards: [bearer, admin],
      handler: async (ctx) => pageResponse(await roles.listUsers(ctx.query), ctx),
    }),
    defineRoute({
      method: "put",
      path: "/api/admin/users/:id/roles",
      tag: "admin",
      summary: "Replace a user's roles (admin only; 409 if no admin would remain)",
      params: idParams,
      body: setRolesBody,
      response: userRolesSchema,
      guards: [bearer, admin, jsonBody],
      handler: (ctx) => roles.setRoles(ctx.params.id, ctx.body.roles),
    }),
  ];
}
