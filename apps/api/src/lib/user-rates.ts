import { randomUUID } from "node:crypto";
import { AppError } from "@app/http-kit";
import type { Logger } from "pino";
import { rateLimitRefusals } from "../metrics.js";
import type { CapsRedis } from "./caps-redis.js";

/** Things a user does at a bounded rate, each with its own limit. */
export type RateKind = "mcpToolCalls";

/** A limit: at most `max` in any window of `windowMs`. */
export interface RateLimit {
  max: number;
  windowMs: number;
}

/** Options of {@link UserRates}. */
export interface UserRatesOptions {
  limits: Record<RateKind, RateLimit>;
  /** Shared counts across instances (the per-user caps' Redis); absent: counted in this process only. */
  redis?: CapsRedis | undefined;
  logger: Logger;
  /** Clock of the in-process count (tests). */
  now?: () => number;
}

/** What a granted take leaves: how many more fit in the window now. */
export interface RateGrant {
  remaining: number;
}

/** Each rate's name: in its `RateLimit` fields and as `api_rate_limit_refusals_total`'s limiter (0 from the start). */
const NAMES: Record<RateKind, string> = { mcpToolCalls: "mcp-tool-calls" };
for (const limiter of Object.values(NAMES)) rateLimitRefusals.inc({ limiter }, 0);
const WHAT: Record<RateKind, string> = { mcpToolCalls: "MCP tool calls" };

// A sliding log per (kind, user): a sorted set of the takes of the last window, scored by Redis
// server time (instance clocks do not matter). Taking n drops what left the window, then adds n
// members if they fit, atomically; a refusal answers the milliseconds until the oldest leaves.
const TAKE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local max, window, n = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local held = redis.call('ZCARD', KEYS[1])
if held + n > max then
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  local wait = window
  if oldest[2] then wait = tonumber(oldest[2]) + window - now end
  return {0, wait}
end
for i = 1, n do redis.call('ZADD', KEYS[1], now, ARGV[4] .. ':' .. i) end
redis.call('PEXPIRE', KEYS[1], window)
return {1, max - held - n}`;

/**
 * Per-user rates over a sliding window (the MCP server's tool calls per minute). Beyond the
 * limit, `take` throws 429 `rate_limited` with `Retry-After` (seconds until a slot leaves the
 * window) and the draft-8 `RateLimit` fields. With Redis the rate holds across instances; when
 * Redis fails, it falls back to this instance's own count and a warning is logged, as the
 * per-user caps do (user-caps.ts).
 */
export class UserRates {
  readonly #limits: Record<RateKind, RateLimit>;
  readonly #redis: CapsRedis | undefined;
  readonly #logger: Logger;
  readonly #now: () => number;
  /** In-process logs: the times of the takes still in the window, oldest first. */
  readonly #local = new Map<string, number[]>();
  #lastSweep = 0;
  #lastWarn = Number.NEGATIVE_INFINITY;

  constructor(options: UserRatesOptions) {
    this.#limits = options.limits;
    this.#redis = options.redis;
    this.#logger = options.logger;
    this.#now = options.now ?? Date.now;
  }

  /** The limit of `kind`. */
  limit(kind: RateKind): RateLimit {
    return this.#limits[kind];
  }

  /** Takes `n` of the user's rate of `kind`, or throws 429 when they do not fit in the window. */
  async take(kind: RateKind, userId: string, n = 1): Promise<RateGrant> {
    const key = `api:rates:${kind}:${userId}`;
    const limit = this.#limits[kind];
    if (this.#redis) {
      let answer: [number, number] | undefined;
      try {
        answer = (await this.#redis.eval(TAKE, [key], [String(limit.max), String(limit.windowMs), String(n), randomUUID()])) as [
          number,
          number,
        ];
      } catch (error) {
        this.#warn(error as Error);
      }
      if (answer) {
        if (answer[0] !== 1) throw refused(kind, limit, answer[1]);
        return { remaining: answer[1] };
      }
    }
    return this.#takeLocal(kind, key, limit, n);
  }

  #takeLocal(kind: RateKind, key: string, limit: RateLimit, n: number): RateGrant {
    const now = this.#now();
    this.#sweep(now, limit.windowMs);
    const log = (this.#local.get(key) ?? []).filter((at) => at > now - limit.windowMs);
    if (log.length + n > limit.max) {
      this.#local.set(key, log);
      throw refused(kind, limit, log.length > 0 ? (log[0] as number) + limit.windowMs - now : limit.windowMs);
    }
    for (let i = 0; i < n; i++) log.push(now);
    this.#local.set(key, log);
    return { remaining: limit.max - log.length };
  }

  /** Once a window: forgets the users whose takes all left it, so the map holds only active users. */
  #sweep(now: number, windowMs: number): void {
    if (now - this.#lastSweep < windowMs) return;
    this.#lastSweep = now;
    for (const [key, log] of this.#local) if ((log.at(-1) ?? 0) <= now - windowMs) this.#local.delete(key);
  }

  #warn(error: Error): void {
    const now = Date.now();
    if (now - this.#lastWarn < 30_000) return;
    this.#lastWarn = now;
    this.#logger.warn({ err: error.message }, "per-user rates store (Redis) unavailable; rates are counted per instance meanwhile");
  }
}

/** The draft-8 `RateLimit` and `RateLimit-Policy` fields of a rate: `max` per window, `remaining` left. */
export function rateLimitHeaders(kind: RateKind, limit: RateLimit, remaining: number, resetS?: number): Record<string, string> {
  const name = NAMES[kind];
  return {
    RateLimit: `"${name}";r=${remaining}${resetS === undefined ? "" : `;t=${resetS}`}`,
    "RateLimit-Policy": `"${name}";q=${limit.max};w=${Math.ceil(limit.windowMs / 1000)}`,
  };
}

function refused(kind: RateKind, limit: RateLimit, waitMs: number): AppError {
  rateLimitRefusals.inc({ limiter: NAMES[kind] });
  const retryS = Math.max(1, Math.ceil(waitMs / 1000));
  const perS = Math.ceil(limit.windowMs / 1000);
  return new AppError("rate_limited", `too many ${WHAT[kind]}: at most ${limit.max} per ${perS} s per user; retry in ${retryS} s`, {
    headers: { "Retry-After": String(retryS), ...rateLimitHeaders(kind, limit, 0, retryS) },
  });
}
