import { ADMIN_LIST_USERS_MAX_LIMIT, type AdminListUsersQuery } from "@app/contracts";
import type { Prisma } from "@app/db";

/** What a list-users query asks the user table, once the admins' ids are known. */
export interface UserListing {
  where: Prisma.UserWhereInput;
  orderBy: Prisma.UserOrderByWithRelationInput[];
  take: number;
  skip: number;
}

type TextOperator = "contains" | "starts_with" | "ends_with";

/**
 * A text match on `email` or `name`, case-insensitive. Prisma puts the value into an ILIKE
 * pattern as it is, so `%`, `_` and the escape character are escaped: a search is literal text.
 */
function textMatch(operator: TextOperator, value: string): Prisma.StringFilter<"User"> {
  const key = operator === "contains" ? "contains" : operator === "starts_with" ? "startsWith" : "endsWith";
  return { [key]: value.replace(/[\\%_]/g, "\\$&"), mode: "insensitive" };
}

/**
 * The filter of a list-users query (its combinations are checked by the contract's schema):
 * `role` through the admins' ids, booleans as `"true"`/`"false"`, lists with `in`/`not_in`.
 */
function filterOf(query: AdminListUsersQuery, adminIds: readonly string[]): Prisma.UserWhereInput | undefined {
  const { filterValue: value, filterField: field = "email", filterOperator: operator = "eq" } = query;
  if (value === undefined) return undefined;
  const negate = operator === "ne" || operator === "not_in";
  const values = Array.isArray(value) ? value : [value];
  if (field === "role") {
    const admins = { id: { in: [...adminIds] } };
    return (value === "admin") !== negate ? admins : { NOT: admins };
  }
  if (field === "banned" || field === "emailVerified") return { [field]: (value === "true") !== negate };
  if (operator === "contains" || operator === "starts_with" || operator === "ends_with") {
    return { [field]: textMatch(operator, values[0] ?? "") };
  }
  const match = { [field]: { in: values } };
  return negate ? { NOT: match } : match;
}

/**
 * The Prisma query of GET admin/list-users (better-auth's search, filter, sort and page): users
 * whose deletion is pending are left out; the page holds at most ADMIN_LIST_USERS_MAX_LIMIT,
 * ordered by `sortBy` (creation when absent) and then by id, so pages never overlap.
 */
export function userListing(query: AdminListUsersQuery, adminIds: readonly string[], deletedIds: readonly string[]): UserListing {
  const and: Prisma.UserWhereInput[] = [];
  if (deletedIds.length) and.push({ id: { notIn: [...deletedIds] } });
  if (query.searchValue) {
    and.push({ [query.searchField ?? "email"]: textMatch(query.searchOperator ?? "contains", query.searchValue) });
  }
  const filter = filterOf(query, adminIds);
  if (filter) and.push(filter);
  const direction = query.sortDirection ?? "asc";
  const sortBy = query.sortBy ?? "createdAt";
  return {
    where: and.length ? { AND: and } : {},
    orderBy: sortBy === "id" ? [{ id: direction }] : [{ [sortBy]: direction }, { id: direction }],
    take: query.limit ?? ADMIN_LIST_USERS_MAX_LIMIT,
    skip: query.offset ?? 0,
  };
}
