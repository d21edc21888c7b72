import type { Verifier } from "@app/auth-verify";
import { KEY_SET_CHANNEL, keySetEventSchema } from "@app/http-kit";
import type { Logger } from "pino";

/** How the event bus is told to feed key set announcements to the verifier. */
export interface KeySetPush {
  channels: Record<string, (payload: string) => void>;
  onReconnect(): void;
}

/**
 * Push of key set changes: identity NOTIFYs `auth_key_set` when it creates, retires or rotates a
 * key, and every API instance, LISTENing on its event connection, refreshes its key set at once
 * (`refreshNow` ignores the cooldown, coalesces bursts, keeps the current set on failure and drops
 * tokens of kids no longer published). The same happens after the LISTEN connection comes back,
 * since announcements made while it was down are lost. The key set cache (max age and cooldown)
 * stays the fallback when no announcement arrives.
 */
export function keySetPush(verifier: Pick<Verifier, "keySet">, logger: Logger): KeySetPush {
  const refresh = (reason: string, detail: Record<string, unknown> = {}) => {
    verifier.keySet.refreshNow().then(
      () => logger.info({ reason, ...detail }, "key set refreshed"),
      (err: Error) => logger.warn({ reason, ...detail, err: err.message }, "key set refresh failed; the cached set stays in use"),
    );
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
  };
}
