import { DEFAULT_MAX_TOKEN_LIFETIME_SEC } from "@app/auth-verify";
import { USER_DELETION_TABLE, type UserDeletionRow } from "@app/contracts";
import { Prisma, type PrismaClient } from "@app/db";

/**
 * How long a deletion is remembered: a token lives at most DEFAULT_MAX_TOKEN_LIFETIME_SEC after
 * it was issued (packages/auth-verify/src/verify.ts), and none is issued after the deletion, so
 * after that (plus a day of margin for clock tolerance) no token of the user can be presented.
 */
export const REMEMBER_DELETION_MS = (DEFAULT_MAX_TOKEN_LIFETIME_SEC + 86_400) * 1000;

/**
 * This instance's in-memory set of deleted accounts, so that a token issued before its account
 * was deleted is refused at authentication with zero database reads (entry/authenticate.ts), and
 * the account's open SSE streams and WebSockets end. Fed by `auth_user_deleted` notifications,
 * and read whole from the `user_deletion` outbox each time the LISTEN connection comes up (a
 * notification sent while it was down is lost). The database tombstone check on every insert
 * (prisma/migrations/20261126000000_api_deleted_user_writes) holds even before this set knows.
 */
export class DeletedUsers {
  readonly #deletedAt = new Map<string, number>();
  readonly #listeners: Array<(userId: string) => void> = [];
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** True when the account of `userId` was deleted. */
  has(userId: string): boolean {
    return this.#deletedAt.has(userId);
  }

  /** Number of remembered deletions. */
  get size(): number {
    return this.#deletedAt.size;
  }

  /** Calls `listener` once for each account that becomes known as deleted. */
  onDeleted(listener: (userId: string) => void): void {
    this.#listeners.push(listener);
  }

  /** Records a deletion (a notification's payload or an outbox row); listeners hear of new ones. */
  add(userId: string, at: number = this.#now()): void {
    if (this.#deletedAt.has(userId)) return;
    this.#deletedAt.set(userId, at);
    for (const listener of this.#listeners) listener(userId);
  }

  /** Reads every deletion still within a token's lifetime from the outbox, and forgets older ones. */
  async load(prisma: PrismaClient): Promise<void> {
    const since = this.#now() - REMEMBER_DELETION_MS;
    const rows = await prisma.$queryRaw<Pick<UserDeletionRow, "user_id" | "requested_at">[]>`
      SELECT user_id, requested_at FROM ${Prisma.raw(USER_DELETION_TABLE)} WHERE requested_at > ${new Date(since)}`;
    for (const row of rows) this.add(row.user_id, row.requested_at.getTime());
    for (const [userId, at] of this.#deletedAt) if (at <= since) this.#deletedAt.delete(userId);
  }
}

/** The user id a `auth_user_deleted` notification names, or undefined for a garbled payload. */
export function deletedUserOf(payload: string): string | undefined {
  try {
    const userId = (JSON.parse(payload) as { userId?: unknown } | null)?.userId;
    return typeof userId === "string" && userId.length > 0 && userId.length <= 200 ? userId : undefined;
  } catch {
    return undefined;
  }
}
