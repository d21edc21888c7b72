import type { Verifier } from "@app/auth-verify";
import { KEY_SET_CHANNEL, keySetEventSchema } from "@app/contracts";
import type { Logger } from "pino";
import { keySetPushes } from "../metrics.js";

/** Retries of a refresh that failed after an announcement (backoff doubling up to `maxDelayMs`). */
export interface KeySetRetry {
  firstDelayMs?: number;
  maxDelayMs?: number;
  /** No retry is started this long after the announcement (the cache's max age takes over). */
  giveUpMs?: number;
}

/** How the event bus is told to feed key set announcements to the verifier. */
export interface KeySetPush {
  channels: Record<string, (payload: string) => void>;
  onReconnect(): void;
  /** Stops a retry in progress (shutdown). */
  close(): void;
}

/**
 * Push of key set changes: identity NOTIFYs `auth_key_set` when it creates, retires or rotates a
 * key, and every API instance, LISTENing on its event connection, refreshes its key set at once
 * (`refreshNow` ignores the cooldown, coalesces bursts, keeps the current set on failure and drops
 * tokens of kids no longer published). The same happens after the LISTEN connection comes back,
 * since announcements made while it was down are lost. A refresh that fails is retried with
 * backoff for a while. The key set cache (max age and cooldown) stays the fallback when no
 * announcement arrives. Each refresh it sets off is counted (`api_key_set_pushes_total`).
 */
export function keySetPush(verifier: Pick<Verifier, "keySet">, logger: Logger, retry: KeySetRetry = {}): KeySetPush {
  const firstDelayMs = retry.firstDelayMs ?? 250;
  const maxDelayMs = retry.maxDelayMs ?? 5_000;
  const giveUpMs = retry.giveUpMs ?? 120_000;
  let timer: NodeJS.Timeout | undefined;
  // One refresh sequence at a time: a new announcement restarts it from the first delay.
  let generation = 0;
  const refresh = (reason: string, detail: Record<string, unknown> = {}) => {
    clearTimeout(timer);
    const mine = ++generation;
    const started = Date.now();
    const attempt = (delayMs: number) => {
      verifier.keySet.refreshNow().then(
        () => {
          keySetPushes.inc({ outcome: "refreshed" });
          logger.info({ reason, ...detail }, "key set refreshed");
        },
        (err: Error) => {
          keySetPushes.inc({ outcome: "failed" });
          if (mine !== generation) return;
          // Identity announces a new key from the transaction that creates it, which can be before
          // its HTTP server answers (at start-up): try again shortly rather than wait for max age.
          const again = Date.now() - started < giveUpMs;
          logger.warn(
            { reason, ...detail, err: err.message, retryInMs: again ? delayMs : undefined },
            "key set refresh failed; the cached set stays in use",
          );
          if (!again) return;
          timer = setTimeout(() => attempt(Math.min(maxDelayMs, delayMs * 2)), delayMs);
          timer.unref();
        },
      );
    };
    attempt(firstDelayMs);
  };
  return {
    channels: {
      [KEY_SET_CHANNEL]: (payload) => {
        let parsed: unknown;
        try {
          parsed = JSON.parse(payload);
        } catch {
          parsed = undefined;
        }
        // Whatever the payload says, the set is fetched again: the announcement is only a trigger.
        const event = keySetEventSchema.safeParse(parsed);
        refresh("key set announced", event.success ? { event: event.data.event, kids: event.data.kids } : {});
      },
    },
    onReconnect: () => refresh("event connection re-established"),
    close: () => {
      generation += 1;
      clearTimeout(timer);
    },
  };
}
