import { KEY_SET_CHANNEL, KEY_SET_EVENT_MAX_KIDS, type KeySetEvent } from "@app/contracts";
import { keySetPushes } from "../metrics.js";

/** What can send a statement: the Prisma client or a transaction client. */
export interface RawExecutor {
  $executeRaw(query: TemplateStringsArray, ...values: unknown[]): Promise<number>;
}

/** The NOTIFY payload: the event and at most {@link KEY_SET_EVENT_MAX_KIDS} kids, never key material. */
export function keySetPayload(event: KeySetEvent["event"], kids: readonly string[]): string {
  const body: KeySetEvent = { event, kids: kids.slice(0, KEY_SET_EVENT_MAX_KIDS) };
  return JSON.stringify(body);
}

/**
 * Announces a key set change on {@link KEY_SET_CHANNEL} (docs/key-set-events.md). Called with the
 * transaction client that made the change: PostgreSQL delivers a NOTIFY only when its transaction
 * commits, so listeners (every API instance) never refetch before the change is visible, and a
 * change that rolls back is never announced. Counted in `identity_key_set_pushes_total`.
 */
export async function announceKeySet(db: RawExecutor, event: KeySetEvent["event"], kids: readonly string[]): Promise<void> {
  if (!kids.length) return;
  try {
    await db.$executeRaw`SELECT pg_notify(${KEY_SET_CHANNEL}, ${keySetPayload(event, kids)})`;
  } catch (error) {
    keySetPushes.inc({ outcome: "failed" });
    throw error;
  }
  keySetPushes.inc({ outcome: "sent" });
}
