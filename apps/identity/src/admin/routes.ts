import {
  AUTH_BASE_PATH,
  adminBanUserBody,
  adminCreateUserBody,
  adminGetUserQuery,
  adminHasPermissionBody,
  adminHasPermissionResponse,
  adminImpersonationResponse,
  adminListUsersQuery,
  adminListUsersResponse,
  adminRevokeUserSessionBody,
  adminSessionsResponse,
  adminSetRoleBody,
  adminSetUserPasswordBody,
  adminSuccessResponse,
  adminUpdateUserBody,
  adminUserIdBody,
  adminUserResponse,
  managedUserSchema,
  statusResponse,
} from "@app/contracts";
import { type AnyRoute, defineRoute } from "@app/http-kit";
import type { Request, Response } from "express";
import type { FeatureDeps } from "../features.js";
import { signedInUser } from "../middleware/guards.js";
import { requestFacts } from "../security-events/record.js";
import type { AdminAct } from "./audit.js";
import { Bans } from "./bans.js";
import { adminGuard } from "./guard.js";
import { Impersonation } from "./impersonation.js";
import { adminLimits } from "./limits.js";
import { roleAllows } from "./permissions.js";
import { AdminRoles, namesAdmin } from "./roles.js";
import { AdminUsers } from "./users.js";

const TAG = "admin";
/** A path under better-auth's admin plugin's base (`/api/auth/admin`). */
const path = (name: string) => `${AUTH_BASE_PATH}/admin/${name}`;
const SUCCESS = { success: true as const };

/**
 * The routes of operators' user management, on better-auth 1.7's `admin` plugin paths, bodies
 * and answers, so its `adminClient` works unchanged (docs/accounts.md "Admin"). Every route but
 * stop-impersonating and has-permission needs a session whose user holds the API's admin role
 * (401 without a session, 403 `forbidden` otherwise); each is limited per IP, per admin, and the
 * costly or powerful ones further (admin/limits.ts). Every change is a security event whose
 * actor is the admin (admin/audit.ts), in the change's transaction.
 */
export function adminRoutes(deps: FeatureDeps): AnyRoute[] {
  const { guards, prisma, now } = deps;
  const roles = new AdminRoles(prisma);
  const bans = new Bans({ prisma, now });
  const users = new AdminUsers({ prisma, roles, bans, tokens: deps.service.mailTokens, accounts: deps.service.settings, now });
  const impersonation = new Impersonation({ prisma, sessions: deps.service.sessions, roles, users, cookie: deps.cookie, now });
  const limits = adminLimits({ now, logger: deps.logger, stores: deps.limiterStores });
  const admin = adminGuard(roles);
  const read = [guards.origin, guards.noStore, limits.perIp, guards.cookies, guards.signedIn, admin, limits.perAdmin];
  const write = [guards.origin, guards.noStore, limits.perIp, guards.body, guards.cookies, guards.signedIn, admin, limits.perAdmin];
  const sensitive = [...write, limits.sensitive];
  const adminId = (res: Response) => signedInUser(res).user.id;
  const act = (req: Request, res: Response): AdminAct => ({ adminId: adminId(res), facts: requestFacts(req) });

  return [
    defineRoute({
      method: "get",
      path: path("list-users"),
      tag: TAG,
      summary: "Users: search, filter, sort and a page of at most 100, with the total",
      query: adminListUsersQuery,
      response: adminListUsersResponse,
      reply: "json",
      guards: read,
      handler: ({ query }) => users.list(query),
    }),
    defineRoute({
      method: "get",
      path: path("get-user"),
      tag: TAG,
      summary: "One user, with its role and ban",
      query: adminGetUserQuery,
      response: managedUserSchema,
      reply: "json",
      guards: read,
      handler: async ({ query }) => users.view(await users.find(query.id)),
    }),
    defineRoute({
      method: "post",
      path: path("create-user"),
      tag: TAG,
      summary: "Create a user, with a password or without (another way to sign in), as user or admin",
      body: adminCreateUserBody,
      response: adminUserResponse,
      reply: "json",
      guards: sensitive,
      handler: async ({ body, req, res }) => ({ user: await users.create(act(req, res), body) }),
    }),
    defineRoute({
      method: "post",
      path: path("update-user"),
      tag: TAG,
      summary: "Change a user's name, image, address, verification, role or ban",
      body: adminUpdateUserBody,
      response: managedUserSchema,
      reply: "json",
      guards: write,
      handler: ({ body, req, res }) => users.update(act(req, res), body.userId, body.data),
    }),
    defineRoute({
      method: "post",
      path: path("set-role"),
      tag: TAG,
      summary: "Make a user an admin (the API's admin role) or take the role (never from the last admin)",
      body: adminSetRoleBody,
      response: adminUserResponse,
      reply: "json",
      guards: write,
      handler: async ({ body, req, res }) => ({ user: await users.setRole(act(req, res), body.userId, namesAdmin(body.role)) }),
    }),
    defineRoute({
      method: "post",
      path: path("set-user-password"),
      tag: TAG,
      summary: "Set a user's password (created when the user has none)",
      body: adminSetUserPasswordBody,
      response: statusResponse,
      reply: "json",
      guards: sensitive,
      handler: async ({ body, req, res }) => {
        await users.setPassword(act(req, res), body.userId, body.newPassword);
        return { status: true as const };
      },
    }),
    defineRoute({
      method: "post",
      path: path("remove-user"),
      tag: TAG,
      summary: "Delete a user (never oneself): every way in ends at once, the data follows",
      body: adminUserIdBody,
      response: adminSuccessResponse,
      reply: "json",
      guards: write,
      handler: async ({ body, req, res }) => {
        await users.remove(act(req, res), body.userId);
        return SUCCESS;
      },
    }),
    defineRoute({
      method: "post",
      path: path("ban-user"),
      tag: TAG,
      summary: "Ban a user (never oneself), for banExpiresIn seconds or until unbanned: sessions end, sign-in is refused",
      body: adminBanUserBody,
      response: adminUserResponse,
      reply: "json",
      guards: write,
      handler: async ({ body, req, res }) => {
        await users.find(body.userId);
        const user = await bans.ban(act(req, res), body.userId, body.banReason, body.banExpiresIn);
        return { user: await users.view(user) };
      },
    }),
    defineRoute({
      method: "post",
      path: path("unban-user"),
      tag: TAG,
      summary: "Lift a user's ban",
      body: adminUserIdBody,
      response: adminUserResponse,
      reply: "json",
      guards: write,
      handler: async ({ body, req, res }) => {
        await users.find(body.userId);
        return { user: await users.view(await bans.unban(act(req, res), body.userId)) };
      },
    }),
    defineRoute({
      method: "post",
      path: path("list-user-sessions"),
      tag: TAG,
      summary: "A user's live sessions (impersonations included), never a secret",
      body: adminUserIdBody,
      response: adminSessionsResponse,
      reply: "json",
      guards: write,
      handler: async ({ body }) => ({ sessions: await users.sessions(body.userId) }),
    }),
    defineRoute({
      method: "post",
      path: path("revoke-user-session"),
      tag: TAG,
      summary: "End one session (its list-user-sessions token)",
      body: adminRevokeUserSessionBody,
      response: adminSuccessResponse,
      reply: "json",
      guards: write,
      handler: async ({ body, req, res }) => {
        await users.revokeSession(act(req, res), body.sessionToken);
        return SUCCESS;
      },
    }),
    defineRoute({
      method: "post",
      path: path("revoke-user-sessions"),
      tag: TAG,
      summary: "End every session of a user",
      body: adminUserIdBody,
      response: adminSuccessResponse,
      reply: "json",
      guards: write,
      handler: async ({ body, req, res }) => {
        await users.revokeSessions(act(req, res), body.userId);
        return SUCCESS;
      },
    }),
    defineRoute({
      method: "post",
      path: path("impersonate-user"),
      tag: TAG,
      summary: "Act as a user (never an admin) for at most an hour; the admin's session waits in the admin_session cookie",
      body: adminUserIdBody,
      response: adminImpersonationResponse,
      reply: "json",
      guards: sensitive,
      handler: ({ body, req, res }) => impersonation.start(req, res, signedInUser(res), body.userId),
    }),
    defineRoute({
      method: "post",
      path: path("stop-impersonating"),
      tag: TAG,
      summary: "End the impersonation and restore the admin's own session",
      response: adminImpersonationResponse,
      reply: "json",
      guards: [guards.origin, guards.noStore, limits.perIp, guards.body, guards.cookies, guards.signedIn],
      handler: ({ req, res }) => impersonation.stop(req, res, signedInUser(res)),
    }),
    defineRoute({
      method: "post",
      path: path("has-permission"),
      tag: TAG,
      summary: "Whether the signed-in user's role grants the permissions asked (better-auth's admin statements)",
      body: adminHasPermissionBody,
      response: adminHasPermissionResponse,
      reply: "json",
      guards: [guards.origin, guards.noStore, limits.perIp, guards.body, guards.cookies, guards.signedIn],
      handler: async ({ body, res }) => {
        const role = await roles.roleOf(adminId(res));
        return { error: null, success: roleAllows(role, body.permissions ?? body.permission ?? {}) };
      },
    }),
  ];
}
