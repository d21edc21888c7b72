import { randomUUID } from "node:crypto";
import type { SecurityEventOutcome, SecurityEventType } from "@app/contracts";
import type { Prisma, PrismaClient } from "@app/db";
import type { Request } from "express";
import { signIns } from "../metrics.js";

/** Where a request came from, as an event records it (never a cookie, token or body). */
export interface RequestFacts {
  ip: string | null;
  userAgent: string | null;
}

/** The facts of a request; the user agent is cut to 512 characters. */
export function requestFacts(req: Request): RequestFacts {
  const agent = req.get("user-agent");
  return { ip: req.ip ?? null, userAgent: agent ? agent.slice(0, 512) : null };
}

/** Facts of an action no request carried (housekeeping, a CLI). */
export const NO_REQUEST: RequestFacts = { ip: null, userAgent: null };

/** One security event to record. */
export interface SecurityEventInput {
  type: SecurityEventType;
  /** The account the event is about; null when there is none (a sign-in for an unknown address, a key rotation). */
  userId: string | null;
  /** The admin who acted on `userId`'s account, when it was not the user. */
  actorId?: string | null;
  outcome?: SecurityEventOutcome;
  /** How: a sign-in method (password, provider, passkey, magic-link, email-otp), a second factor (totp, otp, backup-code). */
  method?: string;
  /** Non-secret facts (a reason code, a role, a client id, a key id): never a secret, token, password or address. */
  detail?: Record<string, string | number | boolean | null>;
}

/**
 * Writes one security event with the client (or transaction) of the action it records, so the
 * event exists exactly when the action committed. It counts nothing: a transaction may still roll
 * back, so the caller counts a sign-in event with {@link countSignIn} once its write committed.
 */
export async function recordEvent(
  db: Prisma.TransactionClient | PrismaClient,
  event: SecurityEventInput,
  facts: RequestFacts,
  now: Date = new Date(),
): Promise<void> {
  const outcome = event.outcome ?? "success";
  await db.authEvent.create({
    data: {
      id: randomUUID(),
      type: event.type,
      userId: event.userId,
      actorId: event.actorId ?? null,
      ip: facts.ip,
      userAgent: facts.userAgent,
      outcome,
      method: event.method ?? null,
      ...(event.detail ? { detail: event.detail as Prisma.InputJsonValue } : {}),
      createdAt: now,
    },
  });
}

/**
 * Counts a `sign_in` or `sign_in_failed` event in `identity_sign_ins_total` (metrics.ts), by
 * method and outcome: called once the event's write committed (after the `$transaction` that
 * wrote it resolved), so the series and the event log never disagree.
 */
export function countSignIn(event: Pick<SecurityEventInput, "type" | "method" | "outcome">): void {
  if (event.type === "sign_in" || event.type === "sign_in_failed")
    signIns.inc({ method: event.method ?? "unknown", outcome: event.outcome ?? "success" });
}
