import type { RequestHandler } from "express";
import type { Logger } from "pino";
import type { MailRateLimitSettings } from "../config.js";
import type { RateLimitRedis } from "./rate-limit-stores.js";

// What the limiters of rate-limits.ts are, as the guards (guards.ts) and the app (app.ts) see
// them; rate-limits.ts builds them.

/** The limiters of the two credential routes, and what closes their stores. */
export interface RateLimits {
  /**
   * POST /api/auth/sign-in/email: per IP before the body is read; after it, per (account, IP)
   * and the account-wide progressive delay.
   */
  signIn: { perIp: RequestHandler; perAccount: RequestHandler[] };
  /** POST /api/auth/sign-up/email: the same limits. */
  signUp: { perIp: RequestHandler; perAccount: RequestHandler[] };
  /** POST /api/auth/reset-password: per IP, every request counts, like sign-in. */
  resetPassword: { perIp: RequestHandler };
  /**
   * The routes that send mail: per IP before the body is read, per address (`email` or
   * `newEmail`) after; every request counts, answered alike for known and unknown addresses.
   */
  mail: { perIp: RequestHandler; perAddress: RequestHandler };
  /**
   * The routes that check a password behind a session or a mailed link (change-password,
   * delete-user, verify-email): wrong passwords count per IP and, once the session is resolved
   * (`resolveSession`), per user; a correct one resets the user's count.
   */
  passwordChecks: { perIp: RequestHandler; perUser: RequestHandler[] };
  /**
   * The routes that check a second-factor code (two-factor/routes.ts): wrong codes count per IP
   * before the body is read; once the caller's user is known (`limitAsUser`), per (user,
   * IP) and the user-wide progressive delay, as sign-in's per account. A success resets the user's.
   */
  twoFactor: { perIp: RequestHandler; perUser: RequestHandler[] };
  /** Routes that store a challenge before anyone signs in (passkey sign-in options): per IP, GET too. */
  challenges: { perIp: RequestHandler };
  /**
   * Dynamic client registration of the authorization server (oauth-provider/): open to anyone, so
   * every request counts per IP (`OAUTH_REGISTRATION_LIMIT`); the store caps clients besides.
   */
  oauthRegistration: { perIp: RequestHandler };
  /** Where the counters live. */
  readonly store: "redis" | "memory";
  close(): Promise<void>;
}

/** What `createRateLimits` needs besides the settings. */
export interface RateLimitDeps {
  logger: Logger;
  /** Clock of the in-memory counters (tests freeze it). */
  now?: () => number;
  /** A Redis connection to use instead of one opened from `settings.redisUrl` (tests). */
  redis?: RateLimitRedis;
  /** Limits of the mail-sending routes (default `DEFAULT_MAIL_RATE_LIMITS`). */
  mail?: MailRateLimitSettings;
  /** Reports a store's failure; the feature limiters' shared warning (window-limits.ts) when given, else a throttled one of its own. */
  storeFailed?: (message: string) => void;
}
