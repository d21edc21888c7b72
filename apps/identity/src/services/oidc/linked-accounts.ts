import type { PrismaClient } from "@app/db";
import { AppError } from "@app/http-kit";

/** An account as better-auth's list-accounts returns it (never a password hash). */
export interface ListedAccount {
  id: string;
  providerId: string;
  accountId: string;
  userId: string;
  scopes: string[];
  createdAt: string;
  updatedAt: string;
}

/** The ways a user signs in (a password, provider identities): list and unlink, as better-auth. */
export class LinkedAccounts {
  readonly #db: PrismaClient;

  constructor(deps: { prisma: PrismaClient }) {
    this.#db = deps.prisma;
  }

  async list(userId: string): Promise<ListedAccount[]> {
    const rows = await this.#db.account.findMany({ where: { userId }, orderBy: { createdAt: "asc" } });
    return rows.map((a) => ({
      id: a.id,
      providerId: a.providerId,
      accountId: a.accountId,
      userId: a.userId,
      scopes: [],
      createdAt: a.createdAt.toISOString(),
      updatedAt: a.updatedAt.toISOString(),
    }));
  }

  /**
   * Removes one way to sign in (by row id, or by provider and optionally its user id); never the last one (400 `bad_request`), which would leave a user
   * nobody can sign in as. The count and the delete share a transaction that locks the user's
   * account rows, so two concurrent unlinks cannot remove the last two.
   */
  async unlink(userId: string, which: { providerId?: string | undefined; accountId?: string | undefined }): Promise<void> {
    const { providerId, accountId } = which;
    await this.#db.$transaction(async (tx) => {
      const rows = await tx.$queryRaw<Array<{ id: string; provider_id: string; account_id: string }>>`
        SELECT "id", "provider_id", "account_id" FROM "account" WHERE "user_id" = ${userId} FOR UPDATE`;
      const target = rows.find((r) =>
        providerId === undefined
          ? r.id === accountId
          : r.provider_id === providerId && (accountId === undefined || r.account_id === accountId),
      );
      if (!target) throw new AppError("not_found", "no such linked account");
      if (rows.length <= 1) throw new AppError("bad_request", "the last way to sign in cannot be unlinked");
      await tx.account.delete({ where: { id: target.id } });
    });
  }
}
