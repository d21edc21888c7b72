import {
  AUTH_BASE_PATH,
  changeEmailBody,
  changePasswordBody,
  changePasswordResponse,
  deleteUserBody,
  deleteUserResponse,
  listSessionsResponse,
  requestPasswordResetBody,
  requestPasswordResetResponse,
  revokeSessionBody,
  type StatusResponse,
  sendVerificationEmailBody,
  statusResponse,
  tokenResponse,
  updateUserBody,
  updateUserResponse,
} from "@app/contracts";
import { type AnyRoute, defineRoute } from "@app/http-kit";
import { type IdentityGuards, signedInUser } from "../middleware/guards.js";
import { type CookieSettings, clearSessionCookie } from "../middleware/session-cookie.js";
import type { IdentityService } from "../services/identity.js";
import { publicUser } from "../views/public.js";

const STATUS: StatusResponse = { status: true };
const TAG = "account";
/** A path under the auth base path (`/api/auth`). */
const path = (name: string) => `${AUTH_BASE_PATH}${name}`;

/**
 * The account routes under /api/auth (docs/accounts.md), with better-auth's paths, bodies and
 * answers so its client works: the mail requests (reset, verification, email change) and the
 * signed-in user's own settings (password, profile, sessions, deletion, a JWT). The mailed links
 * themselves answer in routes/mailed-links.ts.
 */
export function accountRoutes(service: IdentityService, guards: IdentityGuards, cookie: CookieSettings): AnyRoute[] {
  const { limits } = guards;
  /** The signed-in routes that check the user's password: counted per IP, and per user once the session is known. */
  const passwordChecked = [limits.passwordPerIp, guards.body, guards.cookies, guards.passwordQueue, guards.session, limits.passwordPerUser];

  return [
    defineRoute({
      method: "post",
      path: path("/request-password-reset"),
      tag: TAG,
      summary: "Mail a password reset link (answered alike for unknown addresses)",
      body: requestPasswordResetBody,
      response: requestPasswordResetResponse,
      reply: "json",
      guards: [guards.origin, guards.noStore, limits.mailPerIp, guards.body, limits.mailPerAddress],
      handler: async ({ body }) => {
        await service.recovery.requestPasswordReset(body);
        return { ...STATUS, message: "If this email exists in our system, check your email for the reset link" };
      },
    }),
    defineRoute({
      method: "post",
      path: path("/send-verification-email"),
      tag: TAG,
      summary: "Mail a verification link (answered alike for unknown addresses)",
      body: sendVerificationEmailBody,
      response: statusResponse,
      reply: "json",
      guards: [guards.origin, guards.noStore, limits.mailPerIp, guards.body, limits.mailPerAddress],
      handler: async ({ body }) => {
        await service.recovery.sendVerificationEmail(body);
        return STATUS;
      },
    }),
    defineRoute({
      method: "post",
      path: path("/change-email"),
      tag: TAG,
      summary: "Start an email change: the current address confirms first",
      body: changeEmailBody,
      response: statusResponse,
      reply: "json",
      guards: [guards.origin, guards.noStore, limits.mailPerIp, guards.body, limits.mailPerAddress, guards.cookies, guards.signedIn],
      handler: async ({ body, res }) => {
        await service.recovery.changeEmail(signedInUser(res).user, body);
        return STATUS;
      },
    }),
    defineRoute({
      method: "post",
      path: path("/change-password"),
      tag: TAG,
      summary: "Change the password (checks the current one)",
      body: changePasswordBody,
      response: changePasswordResponse,
      reply: "json",
      guards: [guards.origin, guards.noStore, ...passwordChecked, guards.signedIn],
      handler: async ({ body, res }) => {
        const active = signedInUser(res);
        await service.settings.changePassword(active.session, body);
        return { token: null, user: publicUser(active.user) };
      },
    }),
    defineRoute({
      method: "post",
      path: path("/update-user"),
      tag: TAG,
      summary: "Update the name or image",
      body: updateUserBody,
      response: updateUserResponse,
      reply: "json",
      guards: [guards.origin, guards.noStore, guards.body, guards.cookies, guards.signedIn],
      handler: async ({ body, res }) => ({
        ...STATUS,
        user: publicUser(await service.settings.updateUser(signedInUser(res).user.id, body)),
      }),
    }),
    defineRoute({
      method: "get",
      path: path("/list-sessions"),
      tag: TAG,
      summary: "The user's live sessions",
      response: listSessionsResponse,
      reply: "json",
      guards: [guards.origin, guards.noStore, guards.cookies, guards.signedIn],
      handler: ({ res }) => service.settings.listSessions(signedInUser(res).session),
    }),
    defineRoute({
      method: "post",
      path: path("/revoke-session"),
      tag: TAG,
      summary: "End one of the user's sessions",
      body: revokeSessionBody,
      response: statusResponse,
      reply: "json",
      guards: [guards.origin, guards.noStore, guards.body, guards.cookies, guards.signedIn],
      handler: async ({ body, res }) => {
        const active = signedInUser(res);
        // A cookie value is `<id>.<secret>`: only the id part names the session.
        const id = body.id ?? (body.token ?? "").split(".")[0] ?? "";
        await service.settings.revokeSession(active.user.id, id);
        if (id === active.session.id) clearSessionCookie(res, cookie);
        return STATUS;
      },
    }),
    defineRoute({
      method: "post",
      path: path("/revoke-other-sessions"),
      tag: TAG,
      summary: "End every other session of the user",
      response: statusResponse,
      reply: "json",
      guards: [guards.origin, guards.noStore, guards.body, guards.cookies, guards.signedIn],
      handler: async ({ res }) => {
        await service.settings.revokeOtherSessions(signedInUser(res).session);
        return STATUS;
      },
    }),
    defineRoute({
      method: "post",
      path: path("/delete-user"),
      tag: TAG,
      summary: "Delete the account (checks the password)",
      body: deleteUserBody,
      response: deleteUserResponse,
      reply: "json",
      guards: [guards.origin, guards.noStore, ...passwordChecked, guards.signedIn],
      handler: async ({ body, res }) => {
        await service.settings.deleteUser(signedInUser(res).user.id, body.password);
        clearSessionCookie(res, cookie);
        return { success: true as const, message: "User deleted" };
      },
    }),
    defineRoute({
      method: "get",
      path: path("/token"),
      tag: TAG,
      summary: "A JWT for the signed-in user (better-auth's JWT plugin)",
      response: tokenResponse,
      reply: "json",
      guards: [guards.origin, guards.noStore, guards.cookies, guards.signedIn],
      handler: async ({ res }) => ({ token: await service.issueJwt(signedInUser(res).user) }),
    }),
  ];
}
