import type { Guard } from "@app/http-kit";
import type { Request, Response } from "express";
import type { Logger } from "pino";
import { signedInUser } from "../middleware/guards.js";
import { clientKey } from "../middleware/rate-limits.js";
import { type LimiterStores, windowLimiters } from "../middleware/window-limits.js";

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
 * Builds the limiters (middleware/window-limits.ts): fixed windows counted in Redis when
 * `REDIS_URL` is set (one count for every identity instance) and in this process otherwise,
 * answering 429 `rate_limited` with `Retry-After`, each refusal counted by its identifier
 * (`admin-ip`, `admin-user`, `admin-sensitive`) in identity_rate_limit_refusals_total. `scope`
 * names the limiters' counters: the webhook routes (webhooks/routes.ts) count apart from the
 * user management routes.
 */
export function adminLimits(deps: { now: () => number; logger: Logger; stores: LimiterStores; scope?: string }): AdminLimits {
  const limiter = windowLimiters({ ...deps, label: "admin" });
  const scope = deps.scope ?? "admin";
  const limit = (name: string, limit: number, key: (req: Request, res: Response) => string, message: string) =>
    limiter({ identifier: `admin-${name}`, storeName: `${scope}-${name}`, windowMs: ADMIN_LIMIT_WINDOW_MS, limit, key, message });
  const adminKey = (_req: Request, res: Response) => signedInUser(res).user.id;
  return {
    perIp: limit("ip", ADMIN_LIMITS.perIp, clientKey, "too many admin requests from this address; try again later"),
    perAdmin: limit("user", ADMIN_LIMITS.perAdmin, adminKey, "too many admin actions; try again later"),
    sensitive: limit("sensitive", ADMIN_LIMITS.sensitivePerAdmin, adminKey, "too many of this admin action; try again later"),
  };
}
