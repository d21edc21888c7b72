import { createHash } from "node:crypto";
import { emailSchema } from "@app/contracts";
import { AppError } from "@app/http-kit";
import type { ErrorRequestHandler, Request, RequestHandler, Response } from "express";
import { ipKeyGenerator, type RateLimitInfo, type RateLimitRequestHandler, rateLimit, type Store } from "express-rate-limit";
import { slowDown } from "express-slow-down";
import type { MailRateLimitSettings, RateLimitSettings } from "../config.js";
import { rateLimitRefusals } from "../metrics.js";
import type { RateLimitDeps, RateLimits } from "./rate-limit-kinds.js";
import { ClockedMemoryStore, connectRateLimitRedis, RecoveringRedisStore, throttled } from "./rate-limit-stores.js";
import { resolvedUserId } from "./session-cookie.js";

export type { RateLimitDeps, RateLimits } from "./rate-limit-kinds.js";

/** Client registrations one IP may make per window (oauth-provider/: open dynamic registration). */
export const OAUTH_REGISTRATION_LIMIT = { max: 20, windowMs: 60 * 60 * 1000 } as const;

/** Mails per client IP and per address in one hour unless configured otherwise. */
export const DEFAULT_MAIL_RATE_LIMITS: MailRateLimitSettings = { ipMax: 20, addressMax: 5, windowMs: 60 * 60 * 1000 };

const PAIR_INFO = "accountIpRateLimit";
const DELAY_INFO = "accountDelay";

/**
 * The delay before the password check of an account with `failures` recent failed attempts (from
 * any address): none up to `delayAfter`, then `delayMs` doubling with each further failure, at most
 * `delayMaxMs`.
 */
export function accountDelayMs(failures: number, settings: Pick<RateLimitSettings, "delayAfter" | "delayMs" | "delayMaxMs">): number {
  if (failures < settings.delayAfter) return 0;
  return Math.min(settings.delayMs * 2 ** (failures - settings.delayAfter), settings.delayMaxMs);
}

/** The normalised email of a credential body, or undefined when it has none (the route answers 400). */
function emailOf(req: Request): string | undefined {
  const body = req.body as { email?: unknown; newEmail?: unknown } | undefined;
  const parsed = emailSchema.safeParse(body?.email ?? body?.newEmail);
  return parsed.success ? parsed.data : undefined;
}

/** Counters are keyed by a hash of the email: no address is written to Redis. */
function accountKey(email: string): string {
  return createHash("sha256").update(email).digest("base64url").slice(0, 32);
}

/** The client a request counts for: its IP, IPv6 addresses grouped by /56 (express-rate-limit's key). */
export function clientKey(req: Request): string {
  return ipKeyGenerator(req.ip ?? "unknown");
}

/** Where {@link markPasswordRejections} notes that a request failed its password check. */
const PASSWORD_REJECTED = "identity.passwordRejected";
/** Where {@link markPasswordRejections} notes that a request sent a wrong second-factor code. */
const CODE_REJECTED = "identity.codeRejected";
/** The user a second-factor request counts for ({@link limitAsUser}). */
const LIMITED_USER = "identity.limitedUser";

/**
 * Notes the failures the limits count on the response: a 400 `invalid_password` (password-check
 * limits) and a 401 `invalid_code` (second-factor limits).
 */
export const markPasswordRejections: ErrorRequestHandler = (error, _req, res, next) => {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === "invalid_password") res.locals[PASSWORD_REJECTED] = true;
  if (code === "invalid_code") res.locals[CODE_REJECTED] = true;
  next(error);
};

const passwordRejected = (res: Response) => res.locals[PASSWORD_REJECTED] === true;
const codeRejected = (res: Response) => res.locals[CODE_REJECTED] === true;

/**
 * Names the user a second-factor request is for (its session's or its pending sign-in's), which
 * the per-user limits of {@link RateLimits.twoFactor} after it count.
 */
export function limitAsUser(res: Response, userId: string): void {
  res.locals[LIMITED_USER] = userId;
}

const limitedUser = (res: Response) => res.locals[LIMITED_USER] as string | undefined;

const isSuccess = (status: number) => status >= 200 && status < 300;

function retryAfterSeconds(info: RateLimitInfo | undefined, now: number, windowMs: number): number {
  const left = info?.resetTime ? info.resetTime.getTime() - now : windowMs;
  return Math.max(1, Math.ceil(left / 1000));
}

/**
 * Rate limits of sign-in and sign-up (express-rate-limit, express-slow-down). Hard limits, 429
 * `rate_limited` with `Retry-After` before any password hashing: per client IP (every request
 * counts) and per (account, IP) pair (failures count). The account alone is never locked, since
 * anyone can fail on anyone's address: its failures from all addresses only slow its next
 * attempts down ({@link accountDelayMs}, capped at a few seconds), so the owner signs in from a
 * well-behaved client while an attacker's address is locked. Failures are 401 on sign-in and 409
 * on sign-up; a success resets the account's counters, and every window expires. Counters live in
 * Redis when `redisUrl` is set (one count for every identity instance) and in memory otherwise. A
 * store that fails lets the request through (fail open) and logs a throttled warning.
 */
export function createRateLimits(settings: RateLimitSettings, deps: RateLimitDeps): RateLimits {
  const now = deps.now ?? Date.now;
  const redis = deps.redis ?? (settings.redisUrl ? connectRateLimitRedis(settings.redisUrl, deps.logger) : undefined);
  const stores: Store[] = [];
  const storeFor = (name: string): Store => {
    const prefix = `${settings.redisPrefix}${name}:`;
    const store = redis
      ? new RecoveringRedisStore({ sendCommand: redis.sendCommand, prefix })
      : new ClockedMemoryStore({ now, prefix: name });
    stores.push(store);
    return store;
  };
  // express-rate-limit reports store failures (then lets the request through: passOnStoreError)
  // and configuration warnings through this logger; a failing store would log on every request.
  const storeWarning =
    deps.storeFailed ??
    throttled(30_000, (message) => deps.logger.warn({ err: message }, "rate limit store failed; request allowed without rate limiting"));
  const configWarning = throttled(30_000, (message) => deps.logger.warn({ err: message }, "rate limiter warning"));
  const report = (error: unknown, context?: string) => {
    const message = error instanceof Error ? error.message : String(error);
    if (context?.includes("store")) storeWarning(message);
    else configWarning(message);
  };
  const limiterLogger = { warn: report, error: report };
  // Each refusal is counted by its limiter's identifier (identity_rate_limit_refusals_total), a
  // series that exists at 0 from the limiter's creation on.
  const refuse = (limiter: string, message: string, windowMs: number, property: string) => {
    rateLimitRefusals.inc({ limiter }, 0);
    return (req: Request, _res: unknown, next: (e: unknown) => void) => {
      rateLimitRefusals.inc({ limiter });
      const info = (req as unknown as Record<string, RateLimitInfo | undefined>)[property];
      const retryAfter = retryAfterSeconds(info, now(), windowMs);
      next(new AppError("rate_limited", message, { headers: { "Retry-After": String(retryAfter) } }));
    };
  };
  // Every limiter states its policy and what is left of it (IETF draft-8 `RateLimit` and
  // `RateLimit-Policy`, one list member per limiter, named by `identifier`).
  const common = { standardHeaders: "draft-8", legacyHeaders: false, passOnStoreError: true, logger: limiterLogger } as const;

  // `anyMethod`: a GET that writes a row (a WebAuthn challenge) counts as well.
  const perIp = (name: string, anyMethod = false): RateLimitRequestHandler =>
    rateLimit({
      ...common,
      windowMs: settings.ipWindowMs,
      limit: settings.ipMax,
      store: storeFor(`ip-${name}`),
      identifier: `${name}-ip`,
      skip: (req) => !anyMethod && req.method !== "POST",
      keyGenerator: clientKey,
      handler: refuse(`${name}-ip`, "too many requests from this address; try again later", settings.ipWindowMs, "rateLimit"),
    });

  // Per (subject, IP) and the subject-wide delay: the subject is an account's email on sign-in
  // and sign-up, a user on second-factor checks; `failed` says which answers count.
  const perSubject = (
    name: string,
    subject: (req: Request, res: Response) => string | undefined,
    failed: (res: Response) => boolean,
  ): RequestHandler[] => {
    const failuresOnly = {
      skip: (req: Request, res: Response) => req.method !== "POST" || subject(req, res) === undefined,
      // Only failures count. A 2xx deletes the counters (below); any other answer (400, 429,
      // 503...) gives its hit back.
      skipSuccessfulRequests: true,
      requestWasSuccessful: (_req: Request, res: Response) => !failed(res) && !isSuccess(res.statusCode),
    };
    const pair = rateLimit({
      ...common,
      ...failuresOnly,
      windowMs: settings.accountWindowMs,
      limit: settings.accountMax,
      store: storeFor(`account-ip-${name}`),
      identifier: `${name}-account-ip`,
      requestPropertyName: PAIR_INFO,
      keyGenerator: (req, res) => `${accountKey(subject(req, res) ?? "")}:${ipKeyGenerator(req.ip ?? "unknown")}`,
      handler: refuse(
        `${name}-account-ip`,
        "too many failed attempts for this account from this address; try again later",
        settings.accountWindowMs,
        PAIR_INFO,
      ),
    });
    const delay = slowDown({
      ...common,
      ...failuresOnly,
      windowMs: settings.accountWindowMs,
      store: storeFor(`account-${name}`),
      // A delay, never a refusal: it has no quota to state.
      standardHeaders: false,
      requestPropertyName: DELAY_INFO,
      keyGenerator: (req, res) => accountKey(subject(req, res) ?? ""),
      // `used` counts this attempt too.
      delayAfter: settings.delayAfter,
      delayMs: (used) => accountDelayMs(used - 1, settings),
      maxDelayMs: settings.delayMaxMs,
    });
    const infoOf = (req: Request, property: string) =>
      (req as unknown as Record<string, (RateLimitInfo & { delay?: number }) | undefined>)[property];
    const resetOnSuccess: RequestHandler = (req, res, next) => {
      const pairInfo = infoOf(req, PAIR_INFO);
      const delayInfo = infoOf(req, DELAY_INFO);
      if (delayInfo?.delay)
        deps.logger.debug(
          { delayMs: delayInfo.delay, failures: delayInfo.used - 1 },
          `${name} delayed: recent failed attempts on this account`,
        );
      res.once("finish", () => {
        if (!isSuccess(res.statusCode)) return;
        if (pairInfo) void Promise.resolve(pair.resetKey(pairInfo.key)).catch(() => undefined);
        if (delayInfo) void Promise.resolve(delay.resetKey(delayInfo.key)).catch(() => undefined);
      });
      next();
    };
    return [pair, delay, resetOnSuccess];
  };
  const perAccount = (name: string, failureStatus: number) => perSubject(name, emailOf, (res) => res.statusCode === failureStatus);

  const mail = deps.mail ?? DEFAULT_MAIL_RATE_LIMITS;
  const mailPerIp = rateLimit({
    ...common,
    windowMs: mail.windowMs,
    limit: mail.ipMax,
    store: storeFor("ip-mail"),
    identifier: "mail-ip",
    skip: (req) => req.method !== "POST",
    keyGenerator: clientKey,
    handler: refuse("mail-ip", "too many mail requests from this address; try again later", mail.windowMs, "rateLimit"),
  });
  const mailPerAddress = rateLimit({
    ...common,
    windowMs: mail.windowMs,
    limit: mail.addressMax,
    store: storeFor("address-mail"),
    identifier: "mail-address",
    requestPropertyName: "mailAddressRateLimit",
    skip: (req) => req.method !== "POST" || emailOf(req) === undefined,
    keyGenerator: (req) => accountKey(emailOf(req) ?? ""),
    handler: refuse("mail-address", "too many mails to this address; try again later", mail.windowMs, "mailAddressRateLimit"),
  });

  // Password checks: only wrong passwords count (2xx and other failures give their hit back).
  const wrongPasswordsOnly = {
    skipSuccessfulRequests: true,
    requestWasSuccessful: (_req: Request, res: Response) => !passwordRejected(res),
  };
  const passwordPerIp = rateLimit({
    ...common,
    ...wrongPasswordsOnly,
    windowMs: settings.ipWindowMs,
    limit: settings.ipMax,
    store: storeFor("ip-password-check"),
    identifier: "password-check-ip",
    requestPropertyName: "passwordIpRateLimit",
    skip: (req) => req.method !== "POST",
    keyGenerator: clientKey,
    handler: refuse(
      "password-check-ip",
      "too many wrong passwords from this address; try again later",
      settings.ipWindowMs,
      "passwordIpRateLimit",
    ),
  });
  const passwordPerUser = rateLimit({
    ...common,
    ...wrongPasswordsOnly,
    windowMs: settings.accountWindowMs,
    limit: settings.accountMax,
    store: storeFor("user-password-check"),
    identifier: "password-check-user",
    requestPropertyName: "passwordUserRateLimit",
    // Without a session the route answers 401 before any password check.
    skip: (req, res) => req.method !== "POST" || resolvedUserId(res) === undefined,
    keyGenerator: (_req, res) => accountKey(resolvedUserId(res) ?? ""),
    handler: refuse(
      "password-check-user",
      "too many wrong passwords for this account; try again later",
      settings.accountWindowMs,
      "passwordUserRateLimit",
    ),
  });
  const resetUserOnSuccess: RequestHandler = (req, res, next) => {
    const info = (req as unknown as Record<string, RateLimitInfo | undefined>).passwordUserRateLimit;
    res.once("finish", () => {
      if (info && isSuccess(res.statusCode)) void Promise.resolve(passwordPerUser.resetKey(info.key)).catch(() => undefined);
    });
    next();
  };

  // Second-factor codes: only wrong ones count, per IP as for passwords, per user as sign-in per account.
  const twoFactorPerIp = rateLimit({
    ...common,
    skipSuccessfulRequests: true,
    requestWasSuccessful: (_req: Request, res: Response) => !codeRejected(res),
    windowMs: settings.ipWindowMs,
    limit: settings.ipMax,
    store: storeFor("ip-two-factor"),
    identifier: "two-factor-ip",
    requestPropertyName: "twoFactorIpRateLimit",
    skip: (req) => req.method !== "POST",
    keyGenerator: clientKey,
    handler: refuse(
      "two-factor-ip",
      "too many wrong codes from this address; try again later",
      settings.ipWindowMs,
      "twoFactorIpRateLimit",
    ),
  });

  const oauthRegistrationPerIp = rateLimit({
    ...common,
    windowMs: OAUTH_REGISTRATION_LIMIT.windowMs,
    limit: OAUTH_REGISTRATION_LIMIT.max,
    store: storeFor("ip-oauth-registration"),
    identifier: "oauth-registration-ip",
    requestPropertyName: "oauthRegistrationRateLimit",
    skip: (req) => req.method !== "POST",
    keyGenerator: clientKey,
    handler: refuse(
      "oauth-registration-ip",
      "too many client registrations from this address; try again later",
      OAUTH_REGISTRATION_LIMIT.windowMs,
      "oauthRegistrationRateLimit",
    ),
  });

  return {
    passwordChecks: { perIp: passwordPerIp, perUser: [passwordPerUser, resetUserOnSuccess] },
    twoFactor: { perIp: twoFactorPerIp, perUser: perSubject("two-factor", (_req, res) => limitedUser(res), codeRejected) },
    mail: { perIp: mailPerIp, perAddress: mailPerAddress },
    signIn: { perIp: perIp("sign-in"), perAccount: perAccount("sign-in", 401) },
    signUp: { perIp: perIp("sign-up"), perAccount: perAccount("sign-up", 409) },
    resetPassword: { perIp: perIp("reset-password") },
    challenges: { perIp: perIp("challenge", true) },
    oauthRegistration: { perIp: oauthRegistrationPerIp },
    store: redis ? "redis" : "memory",
    async close() {
      for (const store of stores) await store.shutdown?.();
      if (!deps.redis) await redis?.close();
    },
  };
}
