import {
  type ChangeEmailBody,
  type ChangePasswordBody,
  changePasswordResponse,
  type DeleteUserBody,
  deleteUserResponse,
  type LinkedAccount,
  type ListedSession,
  linkedAccountsResponse,
  listSessionsResponse,
  type PublicUser,
  type RequestPasswordResetBody,
  type ResetPasswordBody,
  type RevokeSessionBody,
  type SendVerificationEmailBody,
  type SessionResponse,
  type StatusResponse,
  sessionResponse,
  statusResponse,
  tokenResponse,
  type UnlinkAccountBody,
  type UpdateUserBody,
  userSchema,
} from "@app/contracts";
import { z } from "zod";
import { errorFromResponse } from "./errors.js";
import { type Http, readJson } from "./http.js";

/** The answer of update-user: better-auth's `{status, user}`. */
const updateUserResponse = z.object({ status: z.literal(true), user: userSchema });

/**
 * The account lifecycle routes (docs/accounts.md): identity calls with the session cookie, each
 * answer parsed with the contracts' schemas. The mail routes answer the same for any address.
 */
export interface AccountApi {
  /** Mails a reset link to a known address; `redirectTo` is where the link lands with `?token=`. */
  requestPasswordReset(body: RequestPasswordResetBody): Promise<StatusResponse>;
  /** Sets a new password with a mailed token; every session of the user ends. */
  resetPassword(body: ResetPasswordBody): Promise<StatusResponse>;
  /** Mails a new verification link to an unverified address. */
  sendVerificationEmail(body: SendVerificationEmailBody): Promise<StatusResponse>;
  /** Changes the signed-in user's password (`revokeOtherSessions` ends every other session). */
  changePassword(body: ChangePasswordBody): Promise<{ token: string | null; user: { id: string } }>;
  /**
   * Asks to move the account to `newEmail`: a link goes to the current address; its click sends
   * the new address a link, and the change happens when that one is opened (docs/accounts.md).
   */
  changeEmail(body: ChangeEmailBody): Promise<StatusResponse>;
  /**
   * Updates the name (or image); answers the updated user. The JWT is a snapshot of the name, so a
   * fresh one is fetched at once.
   */
  updateUser(body: UpdateUserBody): Promise<PublicUser>;
  /** The signed-in user's sessions, the current one marked `current`. */
  listSessions(): Promise<ListedSession[]>;
  /** Ends one of the user's sessions (by id from {@link listSessions}). */
  revokeSession(body: RevokeSessionBody): Promise<StatusResponse>;
  /** Ends every session of the user but this one. */
  revokeOtherSessions(): Promise<StatusResponse>;
  /** The ways the user signs in: the password (`credential`) and each linked provider identity. */
  listAccounts(): Promise<LinkedAccount[]>;
  /**
   * Removes one way to sign in, by `{accountId}` (a {@link LinkedAccount}'s id) or `{providerId}`;
   * 400 `bad_request` for the last one.
   */
  unlinkAccount(body: UnlinkAccountBody): Promise<StatusResponse>;
  /** Deletes the account (password required); the stored JWT is removed. */
  deleteUser(body: DeleteUserBody): Promise<void>;
  /**
   * GET /get-session: the cookie's session and user (with `emailVerified`), or null without one.
   * Unlike `getSession` it leaves the stored JWT alone, so asking never signs the page out.
   */
  currentSession(): Promise<SessionResponse | null>;
  /** GET /token: a fresh JWT for the cookie session (not stored). */
  fetchToken(): Promise<string>;
}

/** Routes read with GET (the others are POSTs). */
const GET = new Set(["/list-sessions", "/list-accounts", "/token", "/get-session"]);

/** Builds the {@link AccountApi} over a transport. */
export function accountApi(http: Http): AccountApi {
  const call = async <S extends z.ZodType>(schema: S, path: string, body?: unknown): Promise<z.output<S>> => {
    const response = await http.identity(
      path,
      body === undefined
        ? { method: GET.has(path) ? "GET" : "POST", headers: { accept: "application/json" } }
        : { method: "POST", headers: { "content-type": "application/json", accept: "application/json" }, body: JSON.stringify(body) },
    );
    if (!response.ok) {
      const error = await errorFromResponse(response);
      // These routes answer `unauthorized` only when the cookie session is gone (a wrong password
      // is `invalid_password`, a bad link `invalid_token`): this client's session is over too.
      if (error.status === 401 && error.code === "unauthorized") http.endSession();
      throw error;
    }
    return readJson(response, schema);
  };
  return {
    requestPasswordReset: (body) => call(statusResponse, "/request-password-reset", body),
    resetPassword: (body) => call(statusResponse, "/reset-password", body),
    sendVerificationEmail: (body) => call(statusResponse, "/send-verification-email", body),
    changePassword: (body) => call(changePasswordResponse, "/change-password", body),
    changeEmail: (body) => call(statusResponse, "/change-email", body),
    updateUser: async (body) => {
      const { user } = await call(updateUserResponse, "/update-user", body);
      // If identity does not answer this time, the next session check (watchSession) brings the token.
      await http.refresh().catch(() => undefined);
      return user;
    },
    listSessions: () => call(listSessionsResponse, "/list-sessions"),
    revokeSession: (body) => call(statusResponse, "/revoke-session", body),
    // better-auth's client posts an empty JSON object here; the route takes no body.
    revokeOtherSessions: () => call(statusResponse, "/revoke-other-sessions", {}),
    listAccounts: () => call(linkedAccountsResponse, "/list-accounts"),
    unlinkAccount: (body) => call(statusResponse, "/unlink-account", body),
    deleteUser: async (body) => {
      await call(deleteUserResponse, "/delete-user", body);
      http.tokens.set(null);
    },
    currentSession: () => call(sessionResponse.nullable(), "/get-session"),
    fetchToken: async () => (await call(tokenResponse, "/token")).token,
  };
}
