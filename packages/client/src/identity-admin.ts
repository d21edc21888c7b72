import {
  type AdminBanUserBody,
  type AdminListUsersQuery,
  type AdminListUsersResponse,
  adminImpersonationResponse,
  adminListUsersResponse,
  adminSessionsResponse,
  adminSuccessResponse,
  adminUserResponse,
  type ManagedRole,
  type ManagedSession,
  type ManagedUser,
  managedUserSchema,
} from "@app/contracts";
import type { z } from "zod";
import type { Http } from "./http.js";
import { completeSignIn, identityJson, type SignedIn } from "./sign-in.js";

/** The query of {@link UserAdminApi.listUsers}: a search, a filter, a sort and a page (offset and limit). */
export type ListUsersQuery = AdminListUsersQuery;

/**
 * Operators' user management: better-auth 1.7's `admin` wire (apps/identity/src/admin/), called
 * with the session cookie. Only admins (holders of the `admin` role in the API's user_role) may
 * call it; anyone else gets 403 `forbidden`. Impersonating moves this client's session to the
 * user (their JWT is stored; get-session's `session.impersonatedBy` names the admin) until
 * {@link UserAdminApi.stopImpersonating} brings the admin's session back.
 */
export interface UserAdminApi {
  /** One page of users (at most 100) and the total matching the search and filter. */
  listUsers(query?: ListUsersQuery): Promise<AdminListUsersResponse>;
  /** One user, with role and ban fields. */
  getUser(id: string): Promise<ManagedUser>;
  /**
   * Bans a user: their sessions end and sign-in answers 403 `banned` until `banExpiresIn` seconds
   * have passed (for good without it) or {@link unbanUser}. A JWT already issued keeps working
   * until it expires (JWT_EXPIRES_IN).
   */
  banUser(body: AdminBanUserBody): Promise<ManagedUser>;
  /** Lifts a ban. */
  unbanUser(body: { userId: string }): Promise<ManagedUser>;
  /** A user's sessions, newest last, never their secrets (a row's `token` is what revoke takes). */
  listUserSessions(body: { userId: string }): Promise<ManagedSession[]>;
  /** Ends one session of a user (a {@link listUserSessions} row's `token`). */
  revokeUserSession(body: { sessionToken: string }): Promise<void>;
  /** Ends every session of a user. */
  revokeUserSessions(body: { userId: string }): Promise<void>;
  /** Makes a user an admin or a plain user (`admin` or `user`). */
  setRole(body: { userId: string; role: ManagedRole | ManagedRole[] }): Promise<ManagedUser>;
  /** Deletes a user. */
  removeUser(body: { userId: string }): Promise<void>;
  /**
   * Acts as the user: the session cookie now holds an impersonation session of theirs (an hour at
   * most) and step 2 stores their JWT. Resolves with that session (`session.impersonatedBy` set).
   */
  impersonateUser(body: { userId: string }): Promise<SignedIn>;
  /** Ends the impersonation: the admin's own session comes back, and its JWT is stored. */
  stopImpersonating(): Promise<SignedIn>;
}

/** Builds the {@link UserAdminApi} over a transport. */
export function userAdminApi(http: Http): UserAdminApi {
  const post = <S extends z.ZodType>(schema: S, path: string, body: unknown) => identityJson(http, schema, `/admin${path}`, { body });
  /** A call that moves the cookie session to another user, then step 2 for the new one. */
  const switchTo = async (path: string, body: unknown): Promise<SignedIn> => {
    http.beginUserSwitch();
    await post(adminImpersonationResponse, path, body);
    return completeSignIn(http);
  };
  return {
    listUsers: (values = {}) => {
      const query: Record<string, string | string[]> = {};
      for (const [key, value] of Object.entries(values)) {
        if (value !== undefined) query[key] = Array.isArray(value) ? value.map(String) : String(value);
      }
      return identityJson(http, adminListUsersResponse, "/admin/list-users", { query });
    },
    getUser: (id) => identityJson(http, managedUserSchema, "/admin/get-user", { query: { id } }),
    banUser: async (body) => (await post(adminUserResponse, "/ban-user", body)).user,
    unbanUser: async (body) => (await post(adminUserResponse, "/unban-user", body)).user,
    listUserSessions: async (body) => (await post(adminSessionsResponse, "/list-user-sessions", body)).sessions,
    revokeUserSession: async (body) => {
      await post(adminSuccessResponse, "/revoke-user-session", body);
    },
    revokeUserSessions: async (body) => {
      await post(adminSuccessResponse, "/revoke-user-sessions", body);
    },
    setRole: async (body) => (await post(adminUserResponse, "/set-role", body)).user,
    removeUser: async (body) => {
      await post(adminSuccessResponse, "/remove-user", body);
    },
    impersonateUser: (body) => switchTo("/impersonate-user", body),
    stopImpersonating: () => switchTo("/stop-impersonating", {}),
  };
}
