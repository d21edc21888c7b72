import { createClient } from "@redis/client";
import type { ClientRateLimitInfo, Options, Store } from "express-rate-limit";
import type { Logger } from "pino";
import { type RedisReply, RedisStore } from "rate-limit-redis";

/** Most keys one in-memory store holds; beyond it the oldest are dropped (bounded memory). */
export const MAX_MEMORY_KEYS = 100_000;
/** A Redis command that takes longer than this fails (and the limiter lets the request through). */
export const REDIS_COMMAND_TIMEOUT_MS = 1_000;

interface Counter {
  totalHits: number;
  resetTime: Date;
}

/**
 * A fixed-window counter store in process memory with an injectable clock, so expiry tests can
 * freeze time (express-rate-limit's own MemoryStore reads `Date.now`). Expired keys are swept
 * once per window, and at most {@link MAX_MEMORY_KEYS} keys are held.
 */
export class ClockedMemoryStore implements Store {
  readonly localKeys = true;
  readonly prefix: string;
  readonly #now: () => number;
  readonly #counters = new Map<string, Counter>();
  #windowMs = 60_000;
  #sweep: NodeJS.Timeout | undefined;

  constructor(options: { now?: () => number; prefix?: string } = {}) {
    this.#now = options.now ?? Date.now;
    this.prefix = options.prefix ?? "";
  }

  init(options: Options): void {
    this.#windowMs = options.windowMs;
    clearInterval(this.#sweep);
    this.#sweep = setInterval(() => this.#dropExpired(), this.#windowMs);
    this.#sweep.unref();
  }

  async get(key: string): Promise<ClientRateLimitInfo | undefined> {
    const counter = this.#counters.get(key);
    if (!counter || counter.resetTime.getTime() <= this.#now()) return undefined;
    return { ...counter };
  }

  async increment(key: string): Promise<ClientRateLimitInfo> {
    const now = this.#now();
    let counter = this.#counters.get(key);
    if (!counter || counter.resetTime.getTime() <= now) {
      this.#counters.delete(key);
      counter = { totalHits: 0, resetTime: new Date(now + this.#windowMs) };
      this.#counters.set(key, counter);
      if (this.#counters.size > MAX_MEMORY_KEYS) this.#shrink();
    }
    counter.totalHits += 1;
    return { ...counter };
  }

  async decrement(key: string): Promise<void> {
    const counter = this.#counters.get(key);
    if (counter && counter.totalHits > 0) counter.totalHits -= 1;
  }

  async resetKey(key: string): Promise<void> {
    this.#counters.delete(key);
  }

  async resetAll(): Promise<void> {
    this.#counters.clear();
  }

  shutdown(): void {
    clearInterval(this.#sweep);
    this.#counters.clear();
  }

  #dropExpired(): void {
    const now = this.#now();
    for (const [key, counter] of this.#counters) if (counter.resetTime.getTime() <= now) this.#counters.delete(key);
  }

  #shrink(): void {
    this.#dropExpired();
    for (const key of this.#counters.keys()) {
      if (this.#counters.size <= MAX_MEMORY_KEYS) break;
      this.#counters.delete(key);
    }
  }
}

/**
 * rate-limit-redis, made to recover from a Redis outage: the store loads its Lua script once at
 * start and keeps the rejected promise forever when Redis was down then, so every later
 * increment would fail even after Redis came back. Here a failed load is retried on next use.
 */
export class RecoveringRedisStore extends RedisStore {
  override async increment(key: string): Promise<ClientRateLimitInfo> {
    await this.incrementScriptSha.catch(() => {
      this.incrementScriptSha = this.loadIncrementScript();
    });
    return super.increment(key);
  }
}

/** A Redis connection that never queues commands while offline, so the limiter fails open at once. */
export interface RateLimitRedis {
  sendCommand(...args: string[]): Promise<RedisReply>;
  close(): Promise<void>;
}

/** Calls `warn` at most once per `everyMs` (a down dependency must not flood the log). */
export function throttled(everyMs: number, warn: (message: string) => void): (message: string) => void {
  let last = Number.NEGATIVE_INFINITY;
  return (message) => {
    const now = Date.now();
    if (now - last < everyMs) return;
    last = now;
    warn(message);
  };
}

/**
 * Connects to Redis in the background (reconnecting with backoff for ever). Commands fail fast
 * while it is offline and time out after {@link REDIS_COMMAND_TIMEOUT_MS}; the limiters then let
 * requests through (fail open) and a warning is logged at most every 30 s.
 */
export function connectRateLimitRedis(url: string, logger: Logger): RateLimitRedis {
  const warn = throttled(30_000, (message) =>
    logger.warn({ err: message }, "rate limit store (Redis) unavailable; rate limited routes are not limited meanwhile"),
  );
  const client = createClient({
    url,
    disableOfflineQueue: true,
    socket: { connectTimeout: 2_000, reconnectStrategy: (retries: number) => Math.min(100 * 2 ** retries, 5_000) },
  });
  client.on("error", (error: Error) => warn(error.message));
  client.on("ready", () => logger.info("rate limit store (Redis) connected"));
  void client.connect().catch((error: Error) => warn(error.message));
  return {
    sendCommand: (...args) => client.sendCommand<RedisReply>(args, { timeout: REDIS_COMMAND_TIMEOUT_MS }),
    async close() {
      client.destroy();
    },
  };
}
