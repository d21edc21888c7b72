import { createClient } from "@redis/client";
import type { Logger } from "pino";

/** A Redis command that takes longer than this fails (and the caps fall back to this instance). */
export const CAPS_REDIS_TIMEOUT_MS = 1_000;

/** The Redis the per-user caps need: one script call, and a way to let go. */
export interface CapsRedis {
  eval(script: string, keys: string[], args: string[]): Promise<unknown>;
  close(): Promise<void>;
}

/**
 * Connects to Redis in the background (reconnecting with backoff for ever), the way identity's
 * rate limiter does (apps/identity/src/middleware/rate-limit-stores.ts): commands fail at once
 * while it is offline (no offline queue) and time out after {@link CAPS_REDIS_TIMEOUT_MS}, so a
 * Redis outage never holds a request.
 */
export function connectCapsRedis(url: string, logger: Logger): CapsRedis {
  let lastWarn = Number.NEGATIVE_INFINITY;
  const client = createClient({
    url,
    disableOfflineQueue: true,
    socket: { connectTimeout: 2_000, reconnectStrategy: (retries: number) => Math.min(100 * 2 ** retries, 5_000) },
  });
  client.on("error", (error: Error) => {
    if (Date.now() - lastWarn < 30_000) return;
    lastWarn = Date.now();
    logger.warn({ err: error.message }, "per-user caps store (Redis) unavailable; caps are counted per instance meanwhile");
  });
  client.on("ready", () => logger.info("per-user caps store (Redis) connected"));
  void client.connect().catch(() => undefined);
  return {
    eval: (script, keys, args) =>
      client.sendCommand(["EVAL", script, String(keys.length), ...keys, ...args], { timeout: CAPS_REDIS_TIMEOUT_MS }),
    async close() {
      client.destroy();
    },
  };
}
