import { ADMIN_ROLE, type ManagedRole } from "@app/contracts";
import type { Prisma, PrismaClient } from "@app/db";
import { AppError } from "@app/http-kit";

/** What prisma/migrations/20261126210000_admin_roles `set_user_admin` answers. */
type RoleChange = "granted" | "revoked" | "unchanged" | "unknown_user" | "last_admin";

/**
 * Who is an admin: the API's `user_role` (granted by `pnpm admin:grant`, apps/api/src/admin/),
 * read through the role_directory view on every admin request, never cached and never from a
 * JWT, so a role taken away applies to the next request. Identity changes only the `admin` role,
 * through the `set_user_admin` function the API's database role owns: it cannot write user_role.
 */
export class AdminRoles {
  readonly #db: PrismaClient;

  constructor(prisma: PrismaClient) {
    this.#db = prisma;
  }

  /** True when the user holds the admin role (one read of role_directory, in `tx` when given). */
  async isAdmin(userId: string, tx: Prisma.TransactionClient = this.#db): Promise<boolean> {
    const row = await tx.roleDirectory.findFirst({ where: { userId, role: ADMIN_ROLE }, select: { userId: true } });
    return row !== null;
  }

  /** better-auth's `role` of a user: `admin` or `user`. */
  async roleOf(userId: string, tx: Prisma.TransactionClient = this.#db): Promise<ManagedRole> {
    return (await this.isAdmin(userId, tx)) ? ADMIN_ROLE : "user";
  }

  /** The admins among `userIds` (one read). */
  async adminsAmong(userIds: readonly string[]): Promise<Set<string>> {
    if (!userIds.length) return new Set();
    const rows = await this.#db.roleDirectory.findMany({
      where: { userId: { in: [...userIds] }, role: ADMIN_ROLE },
      select: { userId: true },
    });
    return new Set(rows.map((row) => row.userId));
  }

  /** Every admin's id (list-users' role filter; admins are few). */
  async adminIds(): Promise<string[]> {
    const rows = await this.#db.roleDirectory.findMany({ where: { role: ADMIN_ROLE }, select: { userId: true } });
    return rows.map((row) => row.userId);
  }

  /**
   * Grants or takes the admin role (in `tx` when given, so it commits with the rest). 404 for an
   * unknown user; 409 `conflict` when it would take the role from the only admin.
   */
  async setAdmin(userId: string, admin: boolean, tx: Prisma.TransactionClient = this.#db): Promise<ManagedRole> {
    return (await this.changeAdmin(userId, admin, tx)).role;
  }

  /** {@link setAdmin}, saying whether the role changed (a grant to an admin changes nothing). */
  async changeAdmin(
    userId: string,
    admin: boolean,
    tx: Prisma.TransactionClient = this.#db,
  ): Promise<{ role: ManagedRole; changed: boolean }> {
    const [row] = await tx.$queryRaw<{ outcome: RoleChange }[]>`SELECT set_user_admin(${userId}, ${admin}) AS "outcome"`;
    if (row?.outcome === "unknown_user") throw new AppError("not_found", "no such user");
    if (row?.outcome === "last_admin") throw new AppError("conflict", "this change would leave no admin");
    return { role: admin ? ADMIN_ROLE : "user", changed: row?.outcome === "granted" || row?.outcome === "revoked" };
  }
}

/** better-auth's role input (`"admin"`, `"user"` or a list of them): admin when it names admin. */
export function namesAdmin(role: ManagedRole | readonly ManagedRole[]): boolean {
  return Array.isArray(role) ? role.includes(ADMIN_ROLE) : role === ADMIN_ROLE;
}
