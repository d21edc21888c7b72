import { z } from "zod";
import { sessionRowSchema } from "./account.js";
import { ADMIN_ROLE } from "./admin.js";
import { cleanString, emailSchema, imageSchema, nameSchema, passwordSchema, userSchema } from "./auth.js";

// The wire of operators' user management, as better-auth 1.7's `admin` plugin, so its
// `adminClient` works unchanged: apps/identity/src/admin/. Admins are the users holding the API's
// `admin` role (user_role, read by identity through the role_directory view).

/** Most users one list-users page holds; a larger `limit` is lowered to it. */
export const ADMIN_LIST_USERS_MAX_LIMIT = 100;
/** Largest list-users `offset` (paging further means searching or filtering instead). */
export const ADMIN_LIST_USERS_MAX_OFFSET = 1_000_000;
/** Longest life of an impersonation session, in seconds (better-auth's default hour). */
export const IMPERSONATION_MAX_SECONDS = 60 * 60;
/** Longest ban, in seconds (`banExpiresIn`): ten years; without it a ban lasts until unbanned. */
export const BAN_MAX_SECONDS = 10 * 365 * 24 * 60 * 60;

/** The role better-auth's admin views carry: `admin` for a holder of the API's admin role, else `user`. */
export const managedRoleSchema = z.enum([ADMIN_ROLE, "user"], { error: 'role must be "admin" or "user"' });
export type ManagedRole = z.infer<typeof managedRoleSchema>;

/** A role as better-auth's client sends it: one name or a list (`["admin", "user"]` is admin). */
export const managedRoleInput = z.union([managedRoleSchema, z.array(managedRoleSchema).min(1).max(2)]);

/** A user id in a body. */
const userId = cleanString("userId").min(1, "userId is required").max(200, "userId is too long");

/** A user as the admin routes show it: the public user with better-auth's admin fields. */
export const managedUserSchema = userSchema.extend({
  role: managedRoleSchema,
  banned: z.boolean(),
  banReason: z.string().nullable(),
  banExpires: z.string().nullable(),
});
export type ManagedUser = z.infer<typeof managedUserSchema>;

/** A session as list-user-sessions and impersonate-user show it: never its secret. */
export const managedSessionSchema = sessionRowSchema.extend({
  /** The admin acting as the user in this session, or null. */
  impersonatedBy: z.string().nullable(),
});
export type ManagedSession = z.infer<typeof managedSessionSchema>;

const boundedText = (field: string) => cleanString(field).max(200, `${field} is too long`);

/**
 * Query of GET /api/auth/admin/list-users, as better-auth's: a search, a filter, a sort and a page
 * (`limit` at most {@link ADMIN_LIST_USERS_MAX_LIMIT}, 100 when absent). Filters: `role`
 * (`admin`/`user`), `banned` and `emailVerified` (`true`/`false`) with `eq`/`ne`; `id`, `email`
 * and `name` with `eq`/`ne`/`in`/`not_in`, and `email`/`name` with `contains`, `starts_with`,
 * `ends_with`.
 */
export const adminListUsersQuery = z
  .object({
    searchValue: boundedText("searchValue").optional(),
    searchField: z.enum(["email", "name"]).optional(),
    searchOperator: z.enum(["contains", "starts_with", "ends_with"]).optional(),
    limit: z.coerce
      .number({ error: "limit must be a number" })
      .int("limit must be an integer")
      .min(1, "limit must be at least 1")
      .transform((limit) => Math.min(limit, ADMIN_LIST_USERS_MAX_LIMIT))
      .optional(),
    offset: z.coerce
      .number({ error: "offset must be a number" })
      .int("offset must be an integer")
      .min(0, "offset must not be negative")
      .max(ADMIN_LIST_USERS_MAX_OFFSET, `offset must be at most ${ADMIN_LIST_USERS_MAX_OFFSET}`)
      .optional(),
    sortBy: z
      .enum(["id", "email", "name", "createdAt", "updatedAt"], { error: "sortBy must be id, email, name, createdAt or updatedAt" })
      .optional(),
    sortDirection: z.enum(["asc", "desc"]).optional(),
    filterField: z
      .enum(["id", "email", "name", "emailVerified", "banned", "role"], {
        error: "filterField must be id, email, name, emailVerified, banned or role",
      })
      .optional(),
    filterValue: z.union([boundedText("filterValue"), z.array(boundedText("filterValue")).min(1).max(100)]).optional(),
    filterOperator: z.enum(["eq", "ne", "in", "not_in", "contains", "starts_with", "ends_with"]).optional(),
  })
  .superRefine((query, ctx) => {
    const { filterField = "email", filterOperator = "eq", filterValue } = query;
    if (filterValue === undefined) return;
    const problem = filterProblem(filterField, filterOperator, filterValue);
    if (problem) ctx.addIssue({ code: "custom", path: ["filterValue"], message: problem });
  });
export type AdminListUsersQuery = z.infer<typeof adminListUsersQuery>;

/** Why a list-users filter cannot be applied, or undefined when it can. */
function filterProblem(field: string, operator: string, value: string | string[]): string | undefined {
  const list = operator === "in" || operator === "not_in";
  if (Array.isArray(value) && !list) return `filterOperator ${operator} takes one value`;
  if (field === "role") {
    if (operator !== "eq" && operator !== "ne") return "role is filtered with eq or ne";
    return value === "admin" || value === "user" ? undefined : 'role is "admin" or "user"';
  }
  if (field === "banned" || field === "emailVerified") {
    if (operator !== "eq" && operator !== "ne") return `${field} is filtered with eq or ne`;
    return value === "true" || value === "false" ? undefined : `${field} is "true" or "false"`;
  }
  if (field === "id" && !["eq", "ne", "in", "not_in"].includes(operator)) return "id is filtered with eq, ne, in or not_in";
  return undefined;
}

/** Answer of list-users: one page and the total count of users matching search and filter. */
export const adminListUsersResponse = z.object({
  users: z.array(managedUserSchema),
  total: z.number().int(),
  limit: z.number().int().optional(),
  offset: z.number().int().optional(),
});
export type AdminListUsersResponse = z.infer<typeof adminListUsersResponse>;

/** Query of GET /api/auth/admin/get-user. */
export const adminGetUserQuery = z.object({ id: userId });

/** Body of the routes that name one user: remove-user, unban-user, list-user-sessions, revoke-user-sessions, impersonate-user. */
export const adminUserIdBody = z.strictObject({ userId });
export type AdminUserIdBody = z.infer<typeof adminUserIdBody>;

/**
 * Body of POST /api/auth/admin/create-user. Without `password` the user signs in by another way
 * (a mailed link or code, a provider, or a password reset). `data` takes `emailVerified`, `image`
 * and `role`.
 */
export const adminCreateUserBody = z.strictObject({
  email: emailSchema,
  password: passwordSchema.optional(),
  name: nameSchema,
  role: managedRoleInput.optional(),
  data: z
    .strictObject({
      emailVerified: z.boolean().optional(),
      image: imageSchema.optional(),
      role: managedRoleInput.optional(),
    })
    .optional(),
});
export type AdminCreateUserBody = z.infer<typeof adminCreateUserBody>;

/** What update-user may change: profile, address, role and ban fields (the password has its own route). */
export const adminUserChanges = z
  .strictObject({
    name: nameSchema.optional(),
    image: imageSchema.nullable().optional(),
    email: emailSchema.optional(),
    emailVerified: z.boolean().optional(),
    role: managedRoleInput.optional(),
    banned: z.boolean().optional(),
    banReason: cleanString("banReason").max(500, "banReason is too long").nullable().optional(),
    banExpires: z.iso.datetime({ offset: true, error: "banExpires must be an ISO 8601 date-time" }).nullable().optional(),
  })
  .refine((data) => Object.values(data).some((value) => value !== undefined), "No data to update");
export type AdminUserChanges = z.infer<typeof adminUserChanges>;

/** Body of POST /api/auth/admin/update-user. */
export const adminUpdateUserBody = z.strictObject({ userId, data: adminUserChanges });
export type AdminUpdateUserBody = z.infer<typeof adminUpdateUserBody>;

/** Body of POST /api/auth/admin/set-role. */
export const adminSetRoleBody = z.strictObject({ userId, role: managedRoleInput });
export type AdminSetRoleBody = z.infer<typeof adminSetRoleBody>;

/** Body of POST /api/auth/admin/set-user-password. */
export const adminSetUserPasswordBody = z.strictObject({ userId, newPassword: passwordSchema });
export type AdminSetUserPasswordBody = z.infer<typeof adminSetUserPasswordBody>;

/** Body of POST /api/auth/admin/ban-user: `banExpiresIn` in seconds; without it the ban lasts until unban-user. */
export const adminBanUserBody = z.strictObject({
  userId,
  banReason: cleanString("banReason").max(500, "banReason is too long").optional(),
  banExpiresIn: z
    .number({ error: "banExpiresIn must be a number of seconds" })
    .int("banExpiresIn must be whole seconds")
    .min(1, "banExpiresIn must be at least 1 second")
    .max(BAN_MAX_SECONDS, `banExpiresIn must be at most ${BAN_MAX_SECONDS} seconds`)
    .optional(),
});
export type AdminBanUserBody = z.infer<typeof adminBanUserBody>;

/** Body of POST /api/auth/admin/revoke-user-session: a list-user-sessions row's `token` (its id) or a cookie value. */
export const adminRevokeUserSessionBody = z.strictObject({
  sessionToken: cleanString("sessionToken").min(1, "sessionToken is required").max(200, "sessionToken is too long"),
});

/** Body of POST /api/auth/admin/has-permission: `permissions` (or `permission`) by resource. */
export const adminHasPermissionBody = z
  .strictObject({
    userId: userId.optional(),
    role: z.string().max(100).optional(),
    permission: z.record(z.string().max(50), z.array(z.string().max(50)).max(20)).optional(),
    permissions: z.record(z.string().max(50), z.array(z.string().max(50)).max(20)).optional(),
  })
  .refine((body) => (body.permission === undefined) !== (body.permissions === undefined), "send permissions (or permission), not both");
export type AdminHasPermissionBody = z.infer<typeof adminHasPermissionBody>;

/** Answer of has-permission, as better-auth's. */
export const adminHasPermissionResponse = z.object({ error: z.null(), success: z.boolean() });

/** Answer of the routes that return one user under `user`. */
export const adminUserResponse = z.object({ user: managedUserSchema });
export type AdminUserResponse = z.infer<typeof adminUserResponse>;

/** Answer of list-user-sessions. */
export const adminSessionsResponse = z.object({ sessions: z.array(managedSessionSchema) });
export type AdminSessionsResponse = z.infer<typeof adminSessionsResponse>;

/** Answer of remove-user, revoke-user-session and revoke-user-sessions, as better-auth's. */
export const adminSuccessResponse = z.object({ success: z.literal(true) });

/** Answer of impersonate-user and stop-impersonating: the session now on the cookie and its user. */
export const adminImpersonationResponse = z.object({ session: managedSessionSchema, user: managedUserSchema });
export type AdminImpersonationResponse = z.infer<typeof adminImpersonationResponse>;
