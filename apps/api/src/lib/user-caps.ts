import { randomUUID } from "node:crypto";
import type { ServerResponse } from "node:http";
import { AppError } from "@app/http-kit";
import type { Logger } from "pino";
import { rateLimitRefusals } from "../metrics.js";
import type { CapsRedis } from "./caps-redis.js";

/** The resources a user holds open, each with its own cap. */
export type CapKind = "streams" | "sockets" | "generations" | "mcpRequests";

/** Seconds a refused client is told to wait: slots free up as soon as another stream ends. */
export const CAP_RETRY_AFTER_S = 5;
/** Life of a Redis slot without a refresh: the slots of a crashed instance free up after this. */
export const DEFAULT_LEASE_TTL_MS = 30_000;

/** A held slot; `release` is idempotent and safe on every close path. */
export interface Lease {
  release(): void;
}

/** Options of {@link UserCaps}. */
export interface UserCapsOptions {
  limits: Record<CapKind, number>;
  /** Shared counts across instances; absent: counted in this process only. */
  redis?: CapsRedis | undefined;
  logger: Logger;
  leaseTtlMs?: number;
}

const WHAT: Record<CapKind, string> = {
  streams: "event streams",
  sockets: "WebSockets",
  generations: "generations",
  mcpRequests: "MCP requests",
};

/** Each cap's limiter, as `api_rate_limit_refusals_total` names it (its series is 0 from the start). */
export const CAP_LIMITERS: Record<CapKind, string> = {
  streams: "streams",
  sockets: "sockets",
  generations: "generations",
  mcpRequests: "mcp-requests",
};
for (const limiter of Object.values(CAP_LIMITERS)) rateLimitRefusals.inc({ limiter }, 0);

// Slots are members of a sorted set per (kind, user) scored by their expiry (Redis server time, so
// instance clocks do not matter). Acquiring drops expired members, then adds one if the set is
// below the limit, atomically.
const ACQUIRE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]))
return 1`;

// Pushes the expiry of live slots forward (re-adding any that expired during a Redis outage).
const REFRESH = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
for i = 2, #ARGV do redis.call('ZADD', KEYS[1], now + tonumber(ARGV[1]), ARGV[i]) end
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[1]))
return 1`;

/**
 * Per-user caps on concurrent streams, sockets and generations. Over the cap, `acquire` throws
 * 429 `rate_limited` with `Retry-After`. With Redis the cap holds across instances: each slot is
 * a lease that this instance refreshes every third of its TTL while the resource lives, so the
 * slots of a crashed instance expire instead of leaking. When Redis fails, the cap falls back to
 * this instance's own count (fail open for the global cap) and a warning is logged.
 */
export class UserCaps {
  readonly #limits: Record<CapKind, number>;
  readonly #redis: CapsRedis | undefined;
  readonly #logger: Logger;
  readonly #ttlMs: number;
  readonly #local = new Map<string, number>();
  /** Live Redis slots by key (the members this instance refreshes). */
  readonly #leases = new Map<string, Set<string>>();
  readonly #instance = randomUUID();
  #refresh: NodeJS.Timeout | undefined;
  #lastWarn = Number.NEGATIVE_INFINITY;

  constructor(options: UserCapsOptions) {
    this.#limits = options.limits;
    this.#redis = options.redis;
    this.#logger = options.logger;
    this.#ttlMs = options.leaseTtlMs ?? DEFAULT_LEASE_TTL_MS;
    if (this.#redis) {
      this.#refresh = setInterval(() => void this.#refreshAll(), Math.max(10, Math.floor(this.#ttlMs / 3)));
      this.#refresh.unref();
    }
  }

  /** Takes a slot of `kind` for the user, or throws 429 when the user holds the cap already. */
  async acquire(kind: CapKind, userId: string): Promise<Lease> {
    const limit = this.#limits[kind];
    const key = `api:caps:${kind}:${userId}`;
    if (this.#redis) {
      const member = `${this.#instance}:${randomUUID()}`;
      let granted: boolean | undefined;
      try {
        granted = (await this.#redis.eval(ACQUIRE, [key], [String(limit), String(this.#ttlMs), member])) === 1;
      } catch (error) {
        this.#warn(error as Error);
      }
      if (granted === false) throw refused(kind, limit);
      if (granted) return this.#redisLease(key, member);
    }
    return this.#localLease(kind, key, limit);
  }

  /** Slots this instance holds in process (diagnostics and tests). */
  localCount(kind: CapKind, userId: string): number {
    return this.#local.get(`api:caps:${kind}:${userId}`) ?? 0;
  }

  /** Stops refreshing (the slots still held expire after their TTL). */
  close(): void {
    clearInterval(this.#refresh);
  }

  #localLease(kind: CapKind, key: string, limit: number): Lease {
    const held = this.#local.get(key) ?? 0;
    if (held >= limit) throw refused(kind, limit);
    this.#local.set(key, held + 1);
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        const n = (this.#local.get(key) ?? 1) - 1;
        if (n <= 0) this.#local.delete(key);
        else this.#local.set(key, n);
      },
    };
  }

  #redisLease(key: string, member: string): Lease {
    let set = this.#leases.get(key);
    if (!set) {
      set = new Set();
      this.#leases.set(key, set);
    }
    set.add(member);
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        const current = this.#leases.get(key);
        current?.delete(member);
        if (current?.size === 0) this.#leases.delete(key);
        // A failed removal only delays the slot's return until its TTL passes.
        this.#redis?.eval("return redis.call('ZREM', KEYS[1], ARGV[1])", [key], [member]).catch((error: Error) => this.#warn(error));
      },
    };
  }

  async #refreshAll(): Promise<void> {
    const redis = this.#redis;
    if (!redis) return;
    await Promise.all(
      [...this.#leases].map(([key, members]) =>
        redis.eval(REFRESH, [key], [String(this.#ttlMs), ...members]).catch((error: Error) => this.#warn(error)),
      ),
    );
  }

  #warn(error: Error): void {
    const now = Date.now();
    if (now - this.#lastWarn < 30_000) return;
    this.#lastWarn = now;
    this.#logger.warn({ err: error.message }, "per-user caps store (Redis) unavailable; caps are counted per instance meanwhile");
  }
}

/**
 * Releases a slot when a response closes, whichever way it ends. A client that left while the
 * slot was being acquired closed the response already (no second 'close' comes): released at once.
 */
export function releaseOnClose(res: ServerResponse, lease: Lease): void {
  res.once("close", () => lease.release());
  if (res.destroyed || !res.socket || res.socket.destroyed) lease.release();
}

/**
 * The IETF draft-8 `RateLimit` and `RateLimit-Policy` fields of a cap on things held at once:
 * a quota in "concurrent-requests" (no window), and what is left of it.
 */
export function concurrencyLimitHeaders(name: string, limit: number, remaining: number): Record<string, string> {
  return { RateLimit: `"${name}";r=${remaining}`, "RateLimit-Policy": `"${name}";q=${limit};qu="concurrent-requests"` };
}

function refused(kind: CapKind, limit: number): AppError {
  rateLimitRefusals.inc({ limiter: CAP_LIMITERS[kind] });
  return new AppError("rate_limited", `too many ${WHAT[kind]} at once: at most ${limit} per user; close one or retry later`, {
    headers: { "Retry-After": String(CAP_RETRY_AFTER_S), ...concurrencyLimitHeaders(kind, limit, 0) },
  });
}
