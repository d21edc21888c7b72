import type { Guard } from "@app/http-kit";
import type { Request, Response } from "express";
import type { Logger } from "pino";
import { signedInUser } from "../middleware/guards.js";
import { clientKey } from "../middleware/rate-limits.js";
import { type LimiterStores, windowLimiters } from "../middleware/window-limits.js";

/** The window of the event log's read limits. */
export const EVENT_READ_WINDOW_MS = 60_000;
/** Pages per window: per client IP before the session is read, then per signed-in user. */
export const EVENT_READ_LIMITS = { perIp: 300, perUser: 60 } as const;

/** The limiters of the event log's routes, as guards. */
export interface EventReadLimits {
  perIp: Guard;
  /** After `signedIn` (and the admin guard on the admins' route). */
  perUser: Guard;
}

/**
 * Builds the limiters (middleware/window-limits.ts): fixed windows counted in Redis when
 * `REDIS_URL` is set (one count for every identity instance) and in this process otherwise,
 * answering 429 `rate_limited` with `Retry-After`. `scope` keeps the user's route and the admins'
 * counted apart; each refusal counts by its identifier (`account-events-ip`, `admin-events-user`,
 * ...) in identity_rate_limit_refusals_total.
 */
export function eventReadLimits(deps: { now: () => number; logger: Logger; stores: LimiterStores; scope: string }): EventReadLimits {
  const limiter = windowLimiters({ ...deps, label: "event log" });
  const limit = (name: string, limit: number, key: (req: Request, res: Response) => string) =>
    limiter({
      identifier: `${deps.scope}-${name}`,
      windowMs: EVENT_READ_WINDOW_MS,
      limit,
      key,
      message: "too many requests for security events; try again later",
    });
  return {
    perIp: limit("ip", EVENT_READ_LIMITS.perIp, clientKey),
    perUser: limit("user", EVENT_READ_LIMITS.perUser, (_req, res) => signedInUser(res).user.id),
  };
}
