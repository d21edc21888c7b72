import { AppError, type Guard, middlewareGuard } from "@app/http-kit";
import type { Request, Response } from "express";
import { type RateLimitInfo, rateLimit } from "express-rate-limit";
import type { Logger } from "pino";
import { rateLimitRefusals } from "../metrics.js";
import { signedInUser } from "../middleware/guards.js";
import { ClockedMemoryStore } from "../middleware/rate-limit-stores.js";
import { clientKey } from "../middleware/rate-limits.js";

const MINUTE = 60_000;

/**
 * The admin routes' limits, per window of {@link ADMIN_LIMIT_WINDOW_MS}: any request per client
 * IP before the session is read (a caller who is no admin costs a role read at most this often),
 * then per admin: every action, and the costly or powerful ones (a password hashed, an
 * impersonation opened) fewer.
 */
export const ADMIN_LIMIT_WINDOW_MS = 15 * MINUTE;
export const ADMIN_LIMITS = { perIp: 600, perAdmin: 300, sensitivePerAdmin: 30 } as const;

/** The limiters of the admin routes, as guards. */
export interface AdminLimits {
  /** Every admin route, per client IP, before the session is read. */
  perIp: Guard;
  /** Every admin action, per admin (after the admin guard). */
  perAdmin: Guard;
  /** create-user, set-user-password, impersonate-user: per admin. */
  sensitive: Guard;
}

/**
 * Builds the limiters: fixed windows counted in this process (middleware/rate-limit-stores.ts),
 * answering 429 `rate_limited` with `Retry-After`, each refusal counted by its identifier
 * (`admin-ip`, `admin-user`, `admin-sensitive`) in identity_rate_limit_refusals_total.
 */
export function adminLimits(deps: { now: () => number; logger: Logger }): AdminLimits {
  const report = (error: unknown) =>
    deps.logger.warn({ err: error instanceof Error ? error.message : String(error) }, "admin rate limiter warning");
  const limiter = (name: string, limit: number, key: (req: Request, res: Response) => string, message: string) => {
    const property = `adminRateLimit_${name}`;
    const refusals = rateLimitRefusals.labels(`admin-${name}`);
    refusals.inc(0);
    return middlewareGuard(
      `rateLimit(admin-${name})`,
      rateLimit({
        windowMs: ADMIN_LIMIT_WINDOW_MS,
        limit,
        standardHeaders: "draft-8",
        legacyHeaders: false,
        identifier: `admin-${name}`,
        requestPropertyName: property,
        store: new ClockedMemoryStore({ now: deps.now, prefix: `admin-${name}` }),
        logger: { warn: report, error: report },
        keyGenerator: key,
        handler: (req, _res, next) => {
          refusals.inc();
          const info = (req as unknown as Record<string, RateLimitInfo | undefined>)[property];
          const left = info?.resetTime ? info.resetTime.getTime() - deps.now() : ADMIN_LIMIT_WINDOW_MS;
          next(new AppError("rate_limited", message, { headers: { "Retry-After": String(Math.max(1, Math.ceil(left / 1000))) } }));
        },
      }),
    );
  };
  const adminKey = (_req: Request, res: Response) => signedInUser(res).user.id;
  return {
    perIp: limiter("ip", ADMIN_LIMITS.perIp, clientKey, "too many admin requests from this address; try again later"),
    perAdmin: limiter("user", ADMIN_LIMITS.perAdmin, adminKey, "too many admin actions; try again later"),
    sensitive: limiter("sensitive", ADMIN_LIMITS.sensitivePerAdmin, adminKey, "too many of this admin action; try again later"),
  };
}
