import { AppError, type Guard, middlewareGuard } from "@app/http-kit";
import type { Request, Response } from "express";
import { type RateLimitInfo, rateLimit, type Store } from "express-rate-limit";
import type { Logger } from "pino";
import type { RateLimitSettings } from "../config.js";
import { rateLimitRefusals } from "../metrics.js";
import { ClockedMemoryStore, connectRateLimitRedis, type RateLimitRedis, RecoveringRedisStore, throttled } from "./rate-limit-stores.js";

/**
 * Where the counters of the feature routes' limiters (admin/limits.ts, security-events/limits.ts)
 * live: in Redis under `redisPrefix` + the limiter's name when `REDIS_URL` is set, one count for
 * every identity instance, as sign-in's (rate-limits.ts, handed the same connection by app.ts);
 * in this process's memory otherwise.
 */
export interface LimiterStores {
  readonly kind: "redis" | "memory";
  /** The connection the counters use, for the sign-in limiters to share. */
  readonly redis: RateLimitRedis | undefined;
  /**
   * Reports a store's failure (Redis down): one throttled warning for every limiter on the
   * connection, sign-in's included (app.ts hands it to createRateLimits), since one dependency is
   * down, not one per limiter.
   */
  readonly storeFailed: (message: string) => void;
  /** A new store for one limiter; `name` is its key prefix and must be unique among limiters. */
  storeFor(name: string): Store;
  /** Stops the stores, and closes the connection when it opened it. */
  close(): Promise<void>;
}

export function limiterStores(
  settings: Pick<RateLimitSettings, "redisUrl" | "redisPrefix">,
  deps: { logger: Logger; now?: () => number; redis?: RateLimitRedis },
): LimiterStores {
  const now = deps.now ?? Date.now;
  const redis = deps.redis ?? (settings.redisUrl ? connectRateLimitRedis(settings.redisUrl, deps.logger) : undefined);
  const stores: Store[] = [];
  return {
    kind: redis ? "redis" : "memory",
    redis,
    storeFailed: throttled(30_000, (message) =>
      deps.logger.warn({ err: message }, "rate limit store failed; request allowed without rate limiting"),
    ),
    storeFor(name) {
      const store = redis
        ? new RecoveringRedisStore({ sendCommand: redis.sendCommand, prefix: `${settings.redisPrefix}${name}:` })
        : new ClockedMemoryStore({ now, prefix: name });
      stores.push(store);
      return store;
    },
    async close() {
      for (const store of stores.splice(0)) await store.shutdown?.();
      if (!deps.redis) await redis?.close();
    },
  };
}

/** One fixed-window limiter of a feature route. */
export interface WindowLimit {
  /** The limiter's identifier: `RateLimit` header name and the refusals' `limiter` label. */
  identifier: string;
  /** Its key prefix in the store (default the identifier): two limiters never share one. */
  storeName?: string;
  windowMs: number;
  limit: number;
  key: (req: Request, res: Response) => string;
  /** The 429's message. */
  message: string;
}

/**
 * Builds fixed-window limiters as guards: every request counts, 429 `rate_limited` with
 * `Retry-After` over the limit, each refusal counted by its identifier in
 * identity_rate_limit_refusals_total. A store that fails (Redis down) lets the request through
 * and logs a throttled warning, as sign-in's limiters do.
 */
export function windowLimiters(deps: { stores: LimiterStores; now: () => number; logger: Logger; label: string }) {
  const configWarning = throttled(30_000, (message) => deps.logger.warn({ err: message }, `${deps.label} rate limiter warning`));
  const report = (error: unknown, context?: string) => {
    const message = error instanceof Error ? error.message : String(error);
    if (context?.includes("store")) deps.stores.storeFailed(message);
    else configWarning(message);
  };
  return (spec: WindowLimit): Guard => {
    const property = `windowRateLimit_${spec.identifier}`;
    const refusals = rateLimitRefusals.labels(spec.identifier);
    refusals.inc(0);
    return middlewareGuard(
      `rateLimit(${spec.identifier})`,
      rateLimit({
        windowMs: spec.windowMs,
        limit: spec.limit,
        standardHeaders: "draft-8",
        legacyHeaders: false,
        passOnStoreError: true,
        identifier: spec.identifier,
        requestPropertyName: property,
        store: deps.stores.storeFor(spec.storeName ?? spec.identifier),
        logger: { warn: report, error: report },
        keyGenerator: spec.key,
        handler: (req, _res, next) => {
          refusals.inc();
          const info = (req as unknown as Record<string, RateLimitInfo | undefined>)[property];
          const left = info?.resetTime ? info.resetTime.getTime() - deps.now() : spec.windowMs;
          const retryAfter = String(Math.max(1, Math.ceil(left / 1000)));
          next(new AppError("rate_limited", spec.message, { headers: { "Retry-After": retryAfter } }));
        },
      }),
    );
  };
}
