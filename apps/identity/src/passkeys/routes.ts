import {
  AUTH_BASE_PATH,
  deletePasskeyBody,
  deletePasskeyResponse,
  listPasskeysResponse,
  passkeyAuthenticationOptionsResponse,
  passkeyRegisterOptionsQuery,
  passkeyRegistrationOptionsResponse,
  passkeySchema,
  sessionResponse,
  updatePasskeyBody,
  updatePasskeyResponse,
  verifyPasskeyAuthenticationBody,
  verifyPasskeyRegistrationBody,
} from "@app/contracts";
import { type AnyRoute, AppError, defineRoute } from "@app/http-kit";
import type { Response } from "express";
import type { FeatureDeps } from "../features.js";
import { signedInUser } from "../middleware/guards.js";
import { resolvedUserId } from "../middleware/session-cookie.js";
import { requestFacts } from "../security-events/record.js";
import type { ActiveSession } from "../services/sessions.js";
import { publicSession, publicUser } from "../views/public.js";
import { PasskeyChallenges } from "./challenges.js";
import { PasskeyCeremonies } from "./passkeys.js";

const TAG = "passkeys";
/** A path under better-auth's passkey plugin's base (`/api/auth/passkey`). */
const path = (name: string) => `${AUTH_BASE_PATH}/passkey/${name}`;

/**
 * The routes of passkeys (WebAuthn), on `@better-auth/passkey` 1.7's paths, bodies and answers so
 * its `passkeyClient` works unchanged (docs/accounts.md "Passkeys"). Registering needs a session
 * younger than DELETE_FRESH_AGE, as better-auth's fresh-session rule; a passkey sign-in is limited
 * per IP with password sign-ins and counts as both factors.
 */
export function passkeyRoutes(deps: FeatureDeps): AnyRoute[] {
  const { config, guards } = deps;
  const ceremonies = new PasskeyCeremonies({
    prisma: deps.prisma,
    logger: deps.logger,
    rp: { id: config.factors.passkeyRpId, name: new URL(config.baseUrl).host, origins: config.factors.passkeyOrigins },
    challenges: new PasskeyChallenges({ prisma: deps.prisma, authSecret: config.authSecret, cookie: deps.cookie, now: deps.now }),
    mailOutbox: deps.service.mailOutbox,
    signIns: deps.signIns,
    securityPageUrl: `${config.baseUrl}/account/security`,
  });
  /** The signed-in session, refused (403 `session_not_fresh`) when its sign-in is older than the fresh age. */
  const freshSession = (res: Response): ActiveSession => {
    const active = signedInUser(res);
    if (deps.now() - active.session.createdAt.getTime() > config.factors.deleteFreshAgeMs)
      throw new AppError("session_not_fresh", "adding a passkey needs a recent sign-in: sign in again");
    return active;
  };
  const signedIn = [guards.origin, guards.noStore, guards.cookies, guards.signedIn];
  // Changes to a user's passkeys are the user's own: an admin acting as them cannot make them.
  const ownChange = [...signedIn, guards.notImpersonated];
  const signedInWithBody = [guards.origin, guards.noStore, guards.body, guards.cookies, guards.signedIn, guards.notImpersonated];
  const authenticateOptions = (method: "get" | "post") =>
    defineRoute({
      method,
      path: path("generate-authenticate-options"),
      tag: TAG,
      summary: "Start a passkey sign-in: WebAuthn request options (the signed-in user's passkeys listed)",
      response: passkeyAuthenticationOptionsResponse,
      reply: "json",
      guards: [guards.origin, guards.noStore, guards.limits.challengePerIp, guards.sessionCookies, guards.session],
      handler: ({ res }) => ceremonies.authenticationOptions(res, resolvedUserId(res)),
    });

  return [
    defineRoute({
      method: "get",
      path: path("generate-register-options"),
      tag: TAG,
      summary: "Start adding a passkey: WebAuthn creation options (user verification required)",
      query: passkeyRegisterOptionsQuery,
      response: passkeyRegistrationOptionsResponse,
      reply: "json",
      guards: ownChange,
      handler: ({ query, res }) => ceremonies.registrationOptions(res, freshSession(res).user, query),
    }),
    defineRoute({
      method: "post",
      path: path("verify-registration"),
      tag: TAG,
      summary: "Finish adding a passkey (mails the user)",
      body: verifyPasskeyRegistrationBody,
      response: passkeySchema,
      reply: "json",
      guards: signedInWithBody,
      handler: ({ body, req, res }) => ceremonies.verifyRegistration(req, res, freshSession(res), body),
    }),
    authenticateOptions("get"),
    authenticateOptions("post"),
    defineRoute({
      method: "post",
      path: path("verify-authentication"),
      tag: TAG,
      summary: "Sign in with a passkey (sets the session cookie; counts as two factors)",
      body: verifyPasskeyAuthenticationBody,
      response: sessionResponse,
      reply: "json",
      guards: [guards.origin, guards.noStore, guards.limits.signInPerIp, guards.body, guards.cookies],
      handler: async ({ body, req, res }) => {
        const { session, user } = await ceremonies.verifyAuthentication(req, res, body);
        return { session: publicSession(session), user: publicUser(user) };
      },
    }),
    defineRoute({
      method: "get",
      path: path("list-user-passkeys"),
      tag: TAG,
      summary: "The signed-in user's passkeys",
      response: listPasskeysResponse,
      reply: "json",
      guards: signedIn,
      handler: ({ res }) => ceremonies.list(signedInUser(res).user.id),
    }),
    defineRoute({
      method: "post",
      path: path("delete-passkey"),
      tag: TAG,
      summary: "Delete one of the user's passkeys",
      body: deletePasskeyBody,
      response: deletePasskeyResponse,
      reply: "json",
      guards: signedInWithBody,
      handler: async ({ body, req, res }) => {
        await ceremonies.remove(signedInUser(res).user.id, body.id, requestFacts(req));
        return { status: true as const };
      },
    }),
    defineRoute({
      method: "post",
      path: path("update-passkey"),
      tag: TAG,
      summary: "Rename one of the user's passkeys",
      body: updatePasskeyBody,
      response: updatePasskeyResponse,
      reply: "json",
      guards: signedInWithBody,
      handler: async ({ body, res }) => ({ passkey: await ceremonies.rename(signedInUser(res).user.id, body.id, body.name) }),
    }),
  ];
}
