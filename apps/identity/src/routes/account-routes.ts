import {
  AUTH_BASE_PATH,
  changeEmailBody,
  changePasswordBody,
  changePasswordResponse,
  deleteUserBody,
  deleteUserResponse,
  listSessionsResponse,
  okResponse,
  requestPasswordResetBody,
  requestPasswordResetResponse,
  revokeSessionBody,
  type StatusResponse,
  sendVerificationEmailBody,
  statusResponse,
  tokenResponse,
  updateSessionBody,
  updateSessionResponse,
  updateUserBody,
  updateUserResponse,
} from "@app/contracts";
import { type AnyRoute, defineRoute, isAppError } from "@app/http-kit";
import { type IdentityGuards, signedInUser } from "../middleware/guards.js";
import { type CookieSettings, clearSessionCookie } from "../middleware/session-cookie.js";
import { requestFacts } from "../security-events/record.js";
import type { IdentityService } from "../services/identity.js";
import { publicUser } from "../views/public.js";

const STATUS: StatusResponse = { status: true };
const TAG = "account";
/** DELETE_FRESH_AGE's default (config-factors.ts), for an app built without the setting. */
const DEFAULT_DELETE_FRESH_AGE_MS = 24 * 60 * 60 * 1000;
/** A path under the auth base path (`/api/auth`). */
const path = (name: string) => `${AUTH_BASE_PATH}${name}`;

/**
 * The account routes under /api/auth (docs/accounts.md), with better-auth's paths, bodies and
 * answers so its client works: the mail requests (reset, verification, email change) and the
 * signed-in user's own settings (password, profile, sessions, deletion, a JWT), and /ok. The
 * mailed links themselves (the deletion link too) answer in routes/mailed-links.ts.
 */
export function accountRoutes(
  service: IdentityService,
  guards: IdentityGuards,
  cookie: CookieSettings,
  /** `deleteFreshAgeMs`: DELETE_FRESH_AGE (config.factors.deleteFreshAgeMs). */
  options: { deleteFreshAgeMs?: number } = {},
): AnyRoute[] {
  const { limits } = guards;
  const deletionProofs = {
    freshAgeMs: options.deleteFreshAgeMs ?? DEFAULT_DELETE_FRESH_AGE_MS,
    tokens: service.mailTokens,
    mail: service.recovery.mailEnabled ? service.recovery.confirmDeletion.bind(service.recovery) : undefined,
  };
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
      guards: [
        guards.origin,
        guards.noStore,
        limits.mailPerIp,
        guards.body,
        limits.mailPerAddress,
        guards.cookies,
        guards.signedIn,
        guards.notImpersonated,
      ],
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
      guards: [guards.origin, guards.noStore, ...passwordChecked, guards.signedIn, guards.notImpersonated],
      handler: async ({ body, req, res }) => {
        const active = signedInUser(res);
        await service.settings.changePassword(active.session, body, requestFacts(req));
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
      summary: "End one of the user's sessions (its list-sessions token or id)",
      body: revokeSessionBody,
      response: statusResponse,
      reply: "json",
      guards: [guards.origin, guards.noStore, guards.body, guards.cookies, guards.signedIn],
      handler: async ({ body, req, res }) => {
        const active = signedInUser(res);
        // A list-sessions token is the session's id; a whole cookie value is `<id>.<secret>`.
        const id = body.id ?? (body.token ?? "").split(".")[0] ?? "";
        await service.settings.revokeSession(active.user.id, id, requestFacts(req));
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
      handler: async ({ req, res }) => {
        await service.settings.revokeOtherSessions(signedInUser(res).session, requestFacts(req));
        return STATUS;
      },
    }),
    defineRoute({
      method: "post",
      path: path("/revoke-sessions"),
      tag: TAG,
      summary: "End every session of the user, this one included",
      response: statusResponse,
      reply: "json",
      guards: [guards.origin, guards.noStore, guards.body, guards.cookies, guards.signedIn],
      handler: async ({ req, res }) => {
        await service.settings.revokeSessions(signedInUser(res).user.id, requestFacts(req));
        clearSessionCookie(res, cookie);
        return STATUS;
      },
    }),
    defineRoute({
      method: "post",
      path: path("/update-session"),
      tag: TAG,
      summary: "Set fields of this session (userAgent)",
      body: updateSessionBody,
      response: updateSessionResponse,
      reply: "json",
      guards: [guards.origin, guards.noStore, guards.body, guards.cookies, guards.signedIn],
      handler: async ({ body, res }) => {
        try {
          return { session: await service.settings.updateSession(signedInUser(res).session, body) };
        } catch (error) {
          // The session ended meanwhile: its cookie goes too, as better-auth's.
          if (isAppError(error) && error.code === "unauthorized") clearSessionCookie(res, cookie);
          throw error;
        }
      },
    }),
    defineRoute({
      method: "post",
      path: path("/delete-user"),
      tag: TAG,
      summary: "Delete the account: with the password, a fresh session, or the mailed link's token (else the link is mailed)",
      body: deleteUserBody,
      response: deleteUserResponse,
      reply: "json",
      guards: [guards.origin, guards.noStore, ...passwordChecked, guards.signedIn, guards.notImpersonated],
      handler: async ({ body, req, res }) => {
        // The callback is checked (403) whichever way the request goes; only the mailed link carries it.
        if (body.callbackURL !== undefined) service.recovery.callback(body.callbackURL);
        const answer = await service.settings.deleteUser(signedInUser(res), body, deletionProofs, requestFacts(req));
        if (answer.message === "User deleted") clearSessionCookie(res, cookie);
        return answer;
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
      handler: async ({ res }) => {
        const { user, session } = signedInUser(res);
        return { token: await service.issueJwt(user, session) };
      },
    }),
    defineRoute({
      method: "get",
      path: path("/ok"),
      tag: TAG,
      summary: "Answers { ok: true } while the auth routes serve (better-auth's /ok)",
      response: okResponse,
      reply: "json",
      guards: [guards.origin, guards.noStore],
      handler: () => ({ ok: true as const }),
    }),
  ];
}
