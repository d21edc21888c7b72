import {
  AUTH_BASE_PATH,
  backupCodesResponse,
  enableTwoFactorBody,
  enableTwoFactorResponse,
  sendTwoFactorOtpBody,
  statusResponse,
  totpUriResponse,
  twoFactorPasswordBody,
  twoFactorVerifiedResponse,
  verifyBackupCodeBody,
  verifyTwoFactorCodeBody,
} from "@app/contracts";
import { type AnyRoute, defineRoute } from "@app/http-kit";
import type { FeatureDeps } from "../features.js";
import { signedInUser } from "../middleware/guards.js";
import { requestFacts } from "../security-events/record.js";
import { callerOf, twoFactorCaller } from "./caller.js";
import { TwoFactorCookies } from "./cookies.js";
import { EmailCodes } from "./email-codes.js";
import { TwoFactorEnrolment } from "./enrolment.js";
import { TwoFactorRows } from "./factors.js";
import { AccountChecks } from "./notices.js";
import { PendingSignIns } from "./pending.js";
import { SecondFactorSignIns } from "./second-factor.js";
import { TwoFactorSecrets } from "./secrets.js";
import { TrustedDevices } from "./trusted-devices.js";
import { TwoFactorVerification } from "./verification.js";

const TAG = "two-factor";
/** A path under the auth base path (`/api/auth/two-factor`). */
const path = (name: string) => `${AUTH_BASE_PATH}/two-factor${name}`;

/** The parts of second factors that exist before the app's sign-in finisher (app.ts builds them first). */
export interface TwoFactorParts {
  rows: TwoFactorRows;
  pending: PendingSignIns;
  trusted: TrustedDevices;
  emailCodes: EmailCodes;
  enrolment: TwoFactorEnrolment;
  /** The second-factor step every sign-in of a user with two-factor on takes (sign-in/finish.ts). */
  step: SecondFactorSignIns;
}

/** Builds the second factors' services; the sign-in finisher is then built with their `step`. */
export function twoFactorParts(deps: Pick<FeatureDeps, "prisma" | "now" | "service" | "config" | "cookie">): TwoFactorParts {
  const { prisma, now, service, config } = deps;
  const secrets = new TwoFactorSecrets(config.authSecret);
  const cookies = new TwoFactorCookies(deps.cookie);
  const rows = new TwoFactorRows({ prisma, secrets });
  const pending = new PendingSignIns({ prisma, secrets, cookies, now });
  const trusted = new TrustedDevices({ prisma, secrets, cookies, now });
  const emailCodes = new EmailCodes({ prisma, secrets, outbox: service.mailOutbox, now });
  const checks = new AccountChecks({ prisma, outbox: service.mailOutbox, baseUrl: config.baseUrl });
  const enrolment = new TwoFactorEnrolment({
    prisma,
    rows,
    checks,
    pending,
    trusted,
    emailCodes,
    issuer: new URL(config.baseUrl).hostname,
  });
  const step = new SecondFactorSignIns({ pending, trusted, rows, emailCodes });
  return { rows, pending, trusted, emailCodes, enrolment, step };
}

/**
 * The routes of second factors (TOTP, backup codes, emailed codes) on better-auth 1.7's
 * `twoFactor` wire, so its `twoFactorClient` works unchanged (docs/accounts.md "Second factors").
 * A verified second factor finishes the pending sign-in through the app's finisher.
 */
export function twoFactorRoutes(deps: FeatureDeps, parts: TwoFactorParts): AnyRoute[] {
  const { now, guards, service } = deps;
  const { limits } = guards;
  const { rows, pending, trusted, emailCodes, enrolment } = parts;
  const verification = new TwoFactorVerification({ rows, pending, trusted, emailCodes, enrolment, signIns: deps.signIns, now });

  // Changes confirmed with the password count wrong passwords as the account routes do.
  const passwordChecked = [
    guards.origin,
    guards.noStore,
    limits.passwordPerIp,
    guards.body,
    guards.cookies,
    guards.passwordQueue,
    guards.session,
    limits.passwordPerUser,
    guards.signedIn,
    guards.notImpersonated,
  ];
  const caller = twoFactorCaller(service.sessions, deps.cookie, pending);
  // Codes: wrong ones count per IP before the body, per user once the caller is known.
  const codeChecked = [guards.origin, guards.noStore, limits.twoFactorPerIp, guards.body, guards.cookies, caller, limits.twoFactorPerUser];

  return [
    defineRoute({
      method: "post",
      path: path("/enable"),
      tag: TAG,
      summary: "Start two-factor: a TOTP URI and backup codes (on once a first code verifies), or emailed codes",
      body: enableTwoFactorBody,
      response: enableTwoFactorResponse,
      reply: "json",
      guards: passwordChecked,
      handler: ({ body, req, res }) => enrolment.enable(signedInUser(res).user, body, requestFacts(req)),
    }),
    defineRoute({
      method: "post",
      path: path("/get-totp-uri"),
      tag: TAG,
      summary: "The TOTP URI of the authenticator app again",
      body: twoFactorPasswordBody,
      response: totpUriResponse,
      reply: "json",
      guards: passwordChecked,
      handler: async ({ body, res }) => ({ totpURI: await enrolment.totpUri(signedInUser(res).user, body.password) }),
    }),
    defineRoute({
      method: "post",
      path: path("/verify-totp"),
      tag: TAG,
      summary: "A TOTP code: finishes a pending sign-in (session cookie), or confirms the authenticator app",
      body: verifyTwoFactorCodeBody,
      response: twoFactorVerifiedResponse,
      reply: "json",
      guards: codeChecked,
      handler: ({ body, req, res }) => verification.verifyTotp(req, res, callerOf(res), body),
    }),
    defineRoute({
      method: "post",
      path: path("/send-otp"),
      tag: TAG,
      summary: "Mail a one-time code for the second factor",
      body: sendTwoFactorOtpBody,
      response: statusResponse,
      reply: "json",
      guards: [guards.origin, guards.noStore, limits.mailPerIp, guards.body, guards.cookies, caller],
      handler: async ({ res }) => {
        await verification.sendOtp(callerOf(res));
        return { status: true as const };
      },
    }),
    defineRoute({
      method: "post",
      path: path("/verify-otp"),
      tag: TAG,
      summary: "The emailed code: finishes a pending sign-in (session cookie), or turns emailed codes on",
      body: verifyTwoFactorCodeBody,
      response: twoFactorVerifiedResponse,
      reply: "json",
      guards: codeChecked,
      handler: ({ body, req, res }) => verification.verifyOtp(req, res, callerOf(res), body),
    }),
    defineRoute({
      method: "post",
      path: path("/verify-backup-code"),
      tag: TAG,
      summary: "A backup code (used up): finishes a pending sign-in (session cookie)",
      body: verifyBackupCodeBody,
      response: twoFactorVerifiedResponse,
      reply: "json",
      guards: codeChecked,
      handler: ({ body, req, res }) => verification.verifyBackupCode(req, res, callerOf(res), body),
    }),
    defineRoute({
      method: "post",
      path: path("/generate-backup-codes"),
      tag: TAG,
      summary: "New backup codes; the old ones stop working",
      body: twoFactorPasswordBody,
      response: backupCodesResponse,
      reply: "json",
      guards: passwordChecked,
      handler: async ({ body, res }) => ({
        status: true as const,
        backupCodes: await enrolment.regenerateBackupCodes(signedInUser(res).user, body.password),
      }),
    }),
    defineRoute({
      method: "post",
      path: path("/disable"),
      tag: TAG,
      summary: "Turn two-factor off (its factors, backup codes and trusted devices end)",
      body: twoFactorPasswordBody,
      response: statusResponse,
      reply: "json",
      guards: passwordChecked,
      handler: async ({ body, req, res }) => {
        await enrolment.disable(signedInUser(res).user, body.password, requestFacts(req));
        trusted.forget(res);
        return { status: true as const };
      },
    }),
  ];
}
