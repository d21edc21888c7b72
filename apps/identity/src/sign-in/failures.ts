import type { PrismaClient } from "@app/db";
import { isAppError } from "@app/http-kit";
import { countSignIn, type RequestFacts, recordEvent, type SecurityEventInput } from "../security-events/record.js";

/** A second factor, as sign-in events name it. */
export type SecondFactorKind = "totp" | "otp" | "backup-code" | "trusted-device";

/** The account a refused sign-in was about, kept beside its error (never in the answer). */
const subjects = new WeakMap<object, string>();

/**
 * Marks `error` as a refused sign-in of `userId` (a wrong password of an existing account, a
 * wrong code of its challenge), so the failure event names the account; an unknown address
 * leaves it unmarked and the event names nobody.
 */
export function refusedFor<E extends Error>(error: E, userId: string | null | undefined): E {
  if (userId) subjects.set(error, userId);
  return error;
}

/** The account {@link refusedFor} marked on `error`, or null. */
export function refusedUserOf(error: unknown): string | null {
  return typeof error === "object" && error !== null ? (subjects.get(error) ?? null) : null;
}

/** What a failed sign-in event records besides the error's code. */
export interface FailureFacts {
  method: string;
  /** The account, when the caller knows it better than the error's mark. */
  userId?: string | null | undefined;
  secondFactor?: SecondFactorKind | undefined;
  /** A provider's id (provider sign-in). */
  provider?: string | undefined;
}

/**
 * Records `sign_in_failed` for a sign-in refused with a client error (4xx AppError): its code is
 * the reason. A server error is no refusal and records nothing; neither does a rate-limited
 * request, which never reaches the method. The event holds the reason code, the method and the
 * account when there is one: never the address, password or code that was tried.
 */
export async function recordSignInFailure(db: PrismaClient, error: unknown, failure: FailureFacts, facts: RequestFacts): Promise<void> {
  if (!isAppError(error) || error.status < 400 || error.status >= 500 || error.status === 429) return;
  await recordSignInFailureReason(db, error.code, { ...failure, userId: failure.userId ?? refusedUserOf(error) }, facts);
}

/** Records `sign_in_failed` with an explicit reason code (a provider callback's refusal). */
export async function recordSignInFailureReason(
  db: PrismaClient,
  reason: string,
  failure: FailureFacts,
  facts: RequestFacts,
): Promise<void> {
  const event: SecurityEventInput = {
    type: "sign_in_failed",
    userId: failure.userId ?? null,
    outcome: "failure",
    method: failure.method,
    detail: {
      reason,
      ...(failure.secondFactor ? { secondFactor: failure.secondFactor } : {}),
      ...(failure.provider ? { provider: failure.provider } : {}),
    },
  };
  // Written on its own, never in a transaction: committed once the write returns.
  await recordEvent(db, event, facts);
  countSignIn(event);
}
