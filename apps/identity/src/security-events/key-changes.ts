import type { Prisma } from "@app/db";
import { NO_REQUEST, recordEvent } from "./record.js";

/** Why a key was made or retired, as its `key_rotated` security event says. */
export type KeyChange =
  | { step: "created"; reason: "manual" | "interval" | "first_key" | "secret_changed" }
  | { step: "retired"; reason: "overlap_passed" | "secret_changed" };

/**
 * Records a key made or retired as a `key_rotated` security event of no user (the key's id and
 * why, never key material), in the transaction that made the change.
 */
export function recordKeyChange(tx: Prisma.TransactionClient, kid: string, change: KeyChange, now: Date): Promise<void> {
  return recordEvent(tx, { type: "key_rotated", userId: null, detail: { kid, ...change } }, NO_REQUEST, now);
}
