import { ADMIN_ROLE, type AdminUserView, type PageQuery, type UserRolesView } from "@app/contracts";
import type { PrismaClient } from "@app/db";
import { AppError } from "@app/http-kit";
import { keysetPage, type Page } from "../lib/pagination.js";
import { notFound } from "../lib/refs.js";

/** Advisory-lock key of role changes. */
const ROLE_CHANGE_LOCK = 0x726f6c65; // "role"

/**
 * Roles live in `user_role` and are read from the database whenever a decision needs them, never
 * from the JWT. `rolesOf` is the single read the admin roles middleware makes per request.
 * Users are read through `user_directory` (id, email, name, created date): the API's database
 * role may not read identity's `user` table (prisma/migrations/20261123000000_service_roles).
 */
export class RolesService {
  constructor(private readonly prisma: PrismaClient) {}

  /** The user's roles: one query on user_role. */
  async rolesOf(userId: string): Promise<string[]> {
    const rows = await this.prisma.userRole.findMany({ where: { userId }, select: { role: true } });
    return rows.map((r) => r.role).sort();
  }

  /** Users with their roles, by id: one page of the directory, then one user_role read for it. */
  async listUsers(query: PageQuery): Promise<Page<AdminUserView>> {
    const page = await keysetPage(query, ({ take, before: after }) =>
      this.prisma.userDirectory.findMany({ where: after ? { id: { gt: after } } : {}, orderBy: { id: "asc" }, take }),
    );
    const roles = new Map<string, string[]>();
    if (page.items.length) {
      const rows = await this.prisma.userRole.findMany({
        where: { userId: { in: page.items.map((u) => u.id) } },
        select: { userId: true, role: true },
      });
      for (const r of rows) roles.set(r.userId, [...(roles.get(r.userId) ?? []), r.role]);
    }
    return {
      ...page,
      items: page.items.map((u) => ({
        id: u.id,
        email: u.email,
        name: u.name,
        createdAt: u.createdAt.toISOString(),
        roles: (roles.get(u.id) ?? []).sort(),
      })),
    };
  }

  /** Replaces a user's roles. 404 for an unknown user; 409 when it would leave no admin at all. */
  async setRoles(userId: string, roles: readonly string[]): Promise<UserRolesView> {
    return this.prisma.$transaction(async (tx) => {
      // Serialise role changes, so two admins demoting each other cannot both pass the last-admin check.
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(${ROLE_CHANGE_LOCK})`;
      const user = await tx.userDirectory.findFirst({ where: { id: userId }, select: { id: true } });
      if (!user) throw notFound("user");
      await tx.userRole.deleteMany({ where: { userId, role: { notIn: [...roles] } } });
      if (roles.length) await tx.userRole.createMany({ data: roles.map((role) => ({ userId, role })), skipDuplicates: true });
      if (!roles.includes(ADMIN_ROLE) && (await tx.userRole.count({ where: { role: ADMIN_ROLE } })) === 0) {
        throw new AppError("conflict", "this change would leave no admin");
      }
      return { id: userId, roles: [...roles].sort() };
    });
  }

  /** Grants a role to the user with this (normalised) email; false when no such user exists. */
  async grantByEmail(email: string, role: string): Promise<{ userId: string } | undefined> {
    const user = await this.prisma.userDirectory.findFirst({ where: { email }, select: { id: true } });
    if (!user) return undefined;
    await this.prisma.userRole.createMany({ data: [{ userId: user.id, role }], skipDuplicates: true });
    return { userId: user.id };
  }
}
