import {
  hasPermissionBody,
  hasPermissionResponse,
  listMembersQuery,
  listMembersResponse,
  memberRoleResponse,
  memberSchema,
  organizationQuery,
  removeMemberBody,
  removeMemberResponse,
  updateMemberRoleBody,
} from "@app/contracts";
import { type AnyRoute, defineRoute } from "@app/http-kit";
import { signedInUser } from "../middleware/guards.js";
import type { Members } from "./members.js";
import { type OrgGuards, orgPath, TAG } from "./route-kit.js";

/** The routes of members and roles: list-members, update-member-role, remove-member, has-permission, get-active-member(-role). */
export function memberRoutes(members: Members, g: OrgGuards): AnyRoute[] {
  return [
    defineRoute({
      method: "get",
      path: orgPath("list-members"),
      tag: TAG,
      summary: "A page of an organization's members with their users (members only)",
      query: listMembersQuery,
      response: listMembersResponse,
      reply: "json",
      guards: g.read,
      handler: ({ query, res }) => members.list(signedInUser(res), query),
    }),
    defineRoute({
      method: "post",
      path: orgPath("update-member-role"),
      tag: TAG,
      summary: "Change a member's role (owners, admins; owners alone touch owners; the last owner stays)",
      body: updateMemberRoleBody,
      response: memberSchema,
      reply: "json",
      guards: g.write,
      handler: ({ body, res }) => members.updateRole(signedInUser(res), body),
    }),
    defineRoute({
      method: "post",
      path: orgPath("remove-member"),
      tag: TAG,
      summary: "Remove a member by id or email (owners, admins; owners alone remove owners; the last owner stays)",
      body: removeMemberBody,
      response: removeMemberResponse,
      reply: "json",
      guards: g.write,
      handler: ({ body, res }) => members.remove(signedInUser(res), body),
    }),
    defineRoute({
      method: "post",
      path: orgPath("has-permission"),
      tag: TAG,
      summary: "Whether the caller's role allows the given actions",
      body: hasPermissionBody,
      response: hasPermissionResponse,
      reply: "json",
      guards: g.write,
      handler: ({ body, res }) => members.hasPermission(signedInUser(res), body),
    }),
    defineRoute({
      method: "get",
      path: orgPath("get-active-member"),
      tag: TAG,
      summary: "The caller's membership in the active organization",
      response: memberSchema,
      reply: "json",
      guards: g.read,
      handler: ({ res }) => members.activeMember(signedInUser(res)),
    }),
    defineRoute({
      method: "get",
      path: orgPath("get-active-member-role"),
      tag: TAG,
      summary: "The caller's (or another member's) role in the active organization",
      query: organizationQuery,
      response: memberRoleResponse,
      reply: "json",
      guards: g.read,
      handler: ({ query, res }) => members.activeMemberRole(signedInUser(res), query),
    }),
  ];
}
