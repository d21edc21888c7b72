import { AppError, type Guard, middlewareGuard } from "@app/http-kit";
import type { Request, Response } from "express";
import { type RateLimitInfo, rateLimit } from "express-rate-limit";
import type { Logger } from "pino";
import { rateLimitRefusals } from "../metrics.js";
import { signedInUser } from "../middleware/guards.js";
import { ClockedMemoryStore } from "../middleware/rate-limit-stores.js";
import { clientKey } from "../middleware/rate-limits.js";

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
 * Builds the limiters: fixed windows counted in this process (middleware/rate-limit-stores.ts),
 * answering 429 `rate_limited` with `Retry-After`. `scope` keeps the user's route and the admins'
 * counted apart; each refusal counts by its identifier (`account-events-ip`, `admin-events-user`,
 * ...) in identity_rate_limit_refusals_total.
 */
export function eventReadLimits(deps: { now: () => number; logger: Logger; scope: string }): EventReadLimits {
  const report = (error: unknown) =>
    deps.logger.warn({ err: error instanceof Error ? error.message : String(error) }, "event log rate limiter warning");
  const limiter = (name: string, limit: number, key: (req: Request, res: Response) => string) => {
    const id = `${deps.scope}-${name}`;
    const property = `eventRateLimit_${id}`;
    const refusals = rateLimitRefusals.labels(id);
    refusals.inc(0);
    return middlewareGuard(
      `rateLimit(${id})`,
      rateLimit({
        windowMs: EVENT_READ_WINDOW_MS,
        limit,
        standardHeaders: "draft-8",
        legacyHeaders: false,
        identifier: id,
        requestPropertyName: property,
        store: new ClockedMemoryStore({ now: deps.now, prefix: id }),
        logger: { warn: report, error: report },
        keyGenerator: key,
        handler: (req, _res, next) => {
          refusals.inc();
          const info = (req as unknown as Record<string, RateLimitInfo | undefined>)[property];
          const left = info?.resetTime ? info.resetTime.getTime() - deps.now() : EVENT_READ_WINDOW_MS;
          next(
            new AppError("rate_limited", "too many requests for security events; try again later", {
              headers: { "Retry-After": String(Math.max(1, Math.ceil(left / 1000))) },
            }),
          );
        },
      }),
    );
  };
  return {
    perIp: limiter("ip", EVENT_READ_LIMITS.perIp, clientKey),
    perUser: limiter("user", EVENT_READ_LIMITS.perUser, (_req, res) => signedInUser(res).user.id),
  };
}
