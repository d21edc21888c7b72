import { randomUUID } from "node:crypto";
import type {
  AdminCreateUserBody,
  AdminListUsersQuery,
  AdminListUsersResponse,
  AdminUserChanges,
  ManagedRole,
  ManagedSession,
  ManagedUser,
} from "@app/contracts";
import { isUniqueViolation, type Prisma, type PrismaClient, type User } from "@app/db";
import { AppError } from "@app/http-kit";
import type { AccountSettings } from "../services/account-settings.js";
import type { MailTokens } from "../services/mail-tokens.js";
import { hashPassword } from "../services/passwords.js";
import { enqueueWebhook } from "../webhooks/outbox.js";
import { type AdminAct, recordAdminEvent, sessionsRevoked, userWebhookData } from "./audit.js";
import type { Bans } from "./bans.js";
import { userListing } from "./list-users.js";
import { type AdminRoles, namesAdmin } from "./roles.js";
import { MANAGED_SESSION_FIELDS, managedSession, managedUser } from "./views.js";

const CREDENTIAL = "credential";

const notFound = () => new AppError("not_found", "no such user");
const emailTaken = () => new AppError("email_taken", "an account with this email already exists");

/**
 * The users as an admin manages them (better-auth's admin routes): listing, creating, changing,
 * passwords, sessions and removal. A user whose deletion is pending (`user_deletion`) is no
 * longer one: it is left out of listings and answers 404. Every change is a security event with
 * the admin as its actor and, where other systems care, a webhook, both written in the change's
 * transaction (admin/audit.ts).
 */
export class AdminUsers {
  readonly #db: PrismaClient;
  readonly #roles: AdminRoles;
  readonly #bans: Bans;
  readonly #tokens: MailTokens;
  readonly #now: () => number;

  readonly #accounts: Pick<AccountSettings, "deleteAccount">;

  /** @param deps - `accounts`: the account deletion (services/account-settings.ts) remove-user runs. */
  constructor(deps: {
    prisma: PrismaClient;
    roles: AdminRoles;
    bans: Bans;
    tokens: MailTokens;
    accounts: Pick<AccountSettings, "deleteAccount">;
    now: () => number;
  }) {
    this.#accounts = deps.accounts;
    this.#db = deps.prisma;
    this.#roles = deps.roles;
    this.#bans = deps.bans;
    this.#tokens = deps.tokens;
    this.#now = deps.now;
  }

  /** The user, or 404 (unknown, or its deletion pending). */
  async find(userId: string): Promise<User> {
    const [user, deletion] = await Promise.all([
      this.#db.user.findUnique({ where: { id: userId } }),
      this.#db.userDeletion.findUnique({ where: { userId }, select: { userId: true } }),
    ]);
    if (!user || deletion) throw notFound();
    return user;
  }

  /** The admin view of a user, its role read now. */
  async view(user: User): Promise<ManagedUser> {
    return managedUser(user, await this.#roles.roleOf(user.id));
  }

  /** GET list-users: one page, its users' roles read in one query, and the total matching. */
  async list(query: AdminListUsersQuery): Promise<AdminListUsersResponse> {
    const [adminIds, deleted] = await Promise.all([
      query.filterField === "role" ? this.#roles.adminIds() : Promise.resolve([]),
      this.#db.userDeletion.findMany({ where: { completedAt: null }, select: { userId: true } }),
    ]);
    const listing = userListing(
      query,
      adminIds,
      deleted.map((row) => row.userId),
    );
    const [users, total] = await Promise.all([this.#db.user.findMany(listing), this.#db.user.count({ where: listing.where })]);
    const admins = await this.#roles.adminsAmong(users.map((user) => user.id));
    return {
      users: users.map((user) => managedUser(user, admins.has(user.id) ? "admin" : "user")),
      total,
      limit: listing.take,
      ...(query.offset === undefined ? {} : { offset: listing.skip }),
    };
  }

  /**
   * POST create-user: the user, its password when given, and its role, in one transaction with
   * its `sign_up` event and `user.created` webhook.
   */
  async create(act: AdminAct, body: AdminCreateUserBody): Promise<ManagedUser> {
    const role = body.role ?? body.data?.role;
    const passwordHash = body.password === undefined ? undefined : await hashPassword(body.password);
    try {
      return await this.#db.$transaction(async (tx) => {
        const user = await tx.user.create({
          data: {
            id: randomUUID(),
            email: body.email,
            name: body.name,
            emailVerified: body.data?.emailVerified ?? false,
            ...(body.data?.image === undefined ? {} : { image: body.data.image }),
            ...(passwordHash === undefined
              ? {}
              : { accounts: { create: { id: randomUUID(), providerId: CREDENTIAL, accountId: body.email, passwordHash } } }),
          },
        });
        const granted = role !== undefined && namesAdmin(role) ? await this.#roles.setAdmin(user.id, true, tx) : "user";
        const now = new Date(this.#now());
        await recordAdminEvent(tx, act, { type: "sign_up", userId: user.id, detail: { role: granted } }, now);
        await enqueueWebhook(tx, "user.created", userWebhookData(user), now);
        return managedUser(user, granted);
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw emailTaken();
      throw error;
    }
  }

  /**
   * POST update-user: profile, address, role and ban fields at once (better-auth answers the user
   * itself). A new address moves the password sign-in with it and ends the pending mailed links;
   * `banned: true` ends every session, as ban-user. A `user.updated` webhook, and the events of
   * what changed (email_changed, email_verified, role_changed, user_banned), go with it.
   */
  async update(act: AdminAct, userId: string, data: AdminUserChanges): Promise<ManagedUser> {
    const found = await this.find(userId);
    const banning = data.banned === true;
    if (banning && userId === act.adminId) throw new AppError("bad_request", "you cannot ban yourself");
    try {
      return await this.#db.$transaction(async (tx) => {
        const [before = found] = await tx.$queryRaw<Pick<User, "email" | "emailVerified" | "banned">[]>`
          SELECT "email", "email_verified" AS "emailVerified", "banned" FROM "user" WHERE "id" = ${userId} FOR UPDATE`;
        const changes: Prisma.UserUpdateInput = {
          ...(data.name === undefined ? {} : { name: data.name }),
          ...(data.image === undefined ? {} : { image: data.image }),
          ...(data.email === undefined ? {} : { email: data.email }),
          ...(data.emailVerified === undefined ? {} : { emailVerified: data.emailVerified }),
          ...(data.banned === false ? { banned: false, banReason: null, banExpires: null } : {}),
          ...(data.banned === true ? { banned: true } : {}),
          ...(data.banReason === undefined ? {} : { banReason: data.banReason }),
          ...(data.banExpires === undefined ? {} : { banExpires: data.banExpires === null ? null : new Date(data.banExpires) }),
        };
        if (banning) await this.#bans.lockAndEnd(tx, userId);
        const user = await tx.user.update({ where: { id: userId }, data: changes });
        if (data.email !== undefined) {
          await tx.account.updateMany({ where: { userId, providerId: CREDENTIAL }, data: { accountId: data.email } });
          await this.#tokens.endPending(tx, userId);
        }
        const role = data.role === undefined ? undefined : await this.#roles.changeAdmin(userId, namesAdmin(data.role), tx);
        await this.#recordUpdate(tx, act, before, user, role);
        return managedUser(user, role?.role ?? (await this.#roles.roleOf(userId, tx)));
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw emailTaken();
      throw error;
    }
  }

  /** The events and webhook of an update-user, in its transaction: one event per kind of change. */
  async #recordUpdate(
    tx: Prisma.TransactionClient,
    act: AdminAct,
    before: Pick<User, "email" | "emailVerified" | "banned">,
    user: User,
    role: { role: ManagedRole; changed: boolean } | undefined,
  ): Promise<void> {
    const now = new Date(this.#now());
    const event = (type: "email_changed" | "email_verified" | "role_changed", detail?: Record<string, string>) =>
      recordAdminEvent(tx, act, { type, userId: user.id, ...(detail ? { detail } : {}) }, now);
    if (user.email !== before.email) await event("email_changed");
    if (user.emailVerified && !before.emailVerified) await event("email_verified");
    if (role?.changed) await event("role_changed", { role: role.role });
    if (user.banned !== before.banned) await this.#bans.recordBan(tx, act, user, !user.banned);
    else await enqueueWebhook(tx, "user.updated", userWebhookData(user), now);
  }

  /**
   * POST set-role: grants or takes the admin role; a change is a `role_changed` event (`detail.role`:
   * the role now) in the same transaction. Setting the role the user holds changes and records nothing.
   */
  async setRole(act: AdminAct, userId: string, admin: boolean): Promise<ManagedUser> {
    const user = await this.find(userId);
    return this.#db.$transaction(async (tx) => {
      const { role, changed } = await this.#roles.changeAdmin(userId, admin, tx);
      if (changed) await recordAdminEvent(tx, act, { type: "role_changed", userId, detail: { role } }, new Date(this.#now()));
      return managedUser(user, role);
    });
  }

  /**
   * POST set-user-password: sets (or creates) the password sign-in; the user's sessions stay, as
   * better-auth's. A `password_changed` event with the admin as actor, in the same transaction.
   */
  async setPassword(act: AdminAct, userId: string, newPassword: string): Promise<void> {
    const user = await this.find(userId);
    const passwordHash = await hashPassword(newPassword);
    await this.#db.$transaction(async (tx) => {
      const { count } = await tx.account.updateMany({ where: { userId, providerId: CREDENTIAL }, data: { passwordHash } });
      if (count === 0) {
        await tx.account.create({ data: { id: randomUUID(), userId, providerId: CREDENTIAL, accountId: user.email, passwordHash } });
      }
      await recordAdminEvent(tx, act, { type: "password_changed", userId }, new Date(this.#now()));
    });
  }

  /** POST list-user-sessions: the user's live sessions, newest first, impersonations included. */
  async sessions(userId: string): Promise<ManagedSession[]> {
    await this.find(userId);
    const rows = await this.#db.session.findMany({
      where: { userId, expiresAt: { gt: new Date(this.#now()) } },
      orderBy: [{ createdAt: "desc" }, { id: "desc" }],
      select: MANAGED_SESSION_FIELDS,
    });
    return rows.map(managedSession);
  }

  /**
   * POST revoke-user-session: a session by its list-user-sessions `token` (its id) or a whole
   * cookie value. A session it ended is a `session_revoked` event and a `session.revoked` webhook.
   */
  async revokeSession(act: AdminAct, sessionToken: string): Promise<void> {
    const id = sessionToken.split(".")[0] ?? "";
    await this.#db.$transaction(async (tx) => {
      const ended = await tx.$queryRaw<{ id: string; user_id: string }[]>`
        DELETE FROM "session" WHERE "id" = ${id} RETURNING "id", "user_id"`;
      for (const session of ended) await this.#recordRevoked(tx, act, session.user_id, [session.id]);
    });
  }

  /** POST revoke-user-sessions: every session of the user (a `session_revoked` event when there was one). */
  async revokeSessions(act: AdminAct, userId: string): Promise<void> {
    await this.find(userId);
    await this.#db.$transaction(async (tx) => {
      const ended = await tx.$queryRaw<{ id: string }[]>`DELETE FROM "session" WHERE "user_id" = ${userId} RETURNING "id"`;
      if (ended.length)
        await this.#recordRevoked(
          tx,
          act,
          userId,
          ended.map((s) => s.id),
        );
    });
  }

  async #recordRevoked(tx: Prisma.TransactionClient, act: AdminAct, userId: string, sessionIds: string[]): Promise<void> {
    const now = new Date(this.#now());
    await recordAdminEvent(tx, act, { type: "session_revoked", userId, detail: { count: sessionIds.length } }, now);
    await sessionsRevoked(tx, userId, sessionIds, "admin_revoked", now);
  }

  /**
   * POST remove-user: the account deletion of services/account-settings.ts (`user_deletion` row,
   * `auth_user_deleted` NOTIFY, the API deletes its data and housekeeping the row), with
   * everything that signs in ended at once: sessions, passwords and provider links, passkeys,
   * the second factor, trusted devices, pending challenges and links, and the admin role. The
   * row keeps only its id and stays banned until it is gone, so no method signs it in meanwhile.
   */
  async remove(act: AdminAct, userId: string): Promise<void> {
    if (userId === act.adminId) throw new AppError("bad_request", "you cannot remove yourself");
    await this.find(userId);
    await this.#accounts.deleteAccount(userId, async (tx) => {
      await tx.$queryRaw`SELECT "id" FROM "user" WHERE "id" = ${userId} FOR UPDATE`;
      await this.#roles.setAdmin(userId, false, tx);
      // Banned until the row is gone, so no sign-in method finds it meanwhile.
      await tx.user.update({ where: { id: userId }, data: { banned: true, banReason: "removed", banExpires: null } });
      const now = new Date(this.#now());
      await recordAdminEvent(tx, act, { type: "account_deleted", userId }, now);
      await enqueueWebhook(tx, "user.deleted", { id: userId }, now);
    });
  }
}
