import {
  emailSchema,
  type HasPermissionBody,
  type ListMembersQuery,
  type MemberView,
  type OrganizationQuery,
  type RemoveMemberBody,
  type UpdateMemberRoleBody,
} from "@app/contracts";
import type { Prisma, PrismaClient } from "@app/db";
import type { ActiveSession } from "../services/sessions.js";
import { badRequest, forbidden } from "./errors.js";
import { isOwner, may, permits } from "./roles.js";
import {
  countOwners,
  deleteMember,
  findMember,
  findMemberWithUser,
  findOrganization,
  lockOrganization,
  MEMBER_USER,
  type MemberRow,
} from "./store.js";
import { memberView } from "./views.js";
import { organizationWebhooks } from "./webhooks.js";

/**
 * Members and their roles (better-auth's crud-members and has-permission). An organization
 * always keeps an owner: the last one cannot be removed or demoted; only an owner removes,
 * demotes or makes an owner. Every change locks the organization, so two changes that would each
 * leave one owner run one after the other.
 */
export class Members {
  readonly #db: PrismaClient;

  constructor(deps: { prisma: PrismaClient }) {
    this.#db = deps.prisma;
  }

  /** The organization a query names (slug, id, or the session's active one); 400 without one. */
  async #organizationOf(active: ActiveSession, query: { organizationId?: string | undefined; organizationSlug?: string | undefined }) {
    if (query.organizationSlug) {
      const org = await findOrganization(this.#db, { slug: query.organizationSlug });
      if (!org) throw badRequest("ORGANIZATION_NOT_FOUND");
      return org.id;
    }
    const organizationId = query.organizationId ?? active.session.activeOrganizationId;
    if (!organizationId) throw badRequest("NO_ACTIVE_ORGANIZATION");
    return organizationId;
  }

  /** GET list-members: a page of members with their users, and the total; members only. */
  async list(active: ActiveSession, query: ListMembersQuery): Promise<{ members: MemberView[]; total: number }> {
    const organizationId = await this.#organizationOf(active, query);
    if (!(await findMember(this.#db, active.user.id, organizationId))) throw forbidden("YOU_ARE_NOT_A_MEMBER_OF_THIS_ORGANIZATION");
    const where: Prisma.MemberWhereInput = { organizationId };
    if (query.filterField && query.filterValue !== undefined) {
      const value = query.filterOperator === "ne" ? { not: query.filterValue } : query.filterValue;
      where[query.filterField] = value;
    }
    const direction = query.sortDirection ?? "asc";
    const [rows, total] = await Promise.all([
      this.#db.member.findMany({
        where,
        include: { user: MEMBER_USER },
        orderBy: [{ [query.sortBy ?? "createdAt"]: direction }, { id: "asc" }],
        take: query.limit ?? 100,
        skip: query.offset ?? 0,
      }),
      this.#db.member.count({ where }),
    ]);
    return { members: rows.map(memberView), total };
  }

  /**
   * POST update-member-role: members with `member:update` (owners, admins). Only an owner changes
   * an owner or grants the owner role; the last owner keeps it (400).
   */
  async updateRole(active: ActiveSession, body: UpdateMemberRoleBody): Promise<MemberView> {
    const organizationId = body.organizationId ?? active.session.activeOrganizationId;
    if (!organizationId) throw badRequest("NO_ACTIVE_ORGANIZATION");
    return this.#db.$transaction(async (tx) => {
      const org = await lockOrganization(tx, organizationId);
      const caller = org && (await findMember(tx, active.user.id, organizationId));
      if (!caller) throw badRequest("MEMBER_NOT_FOUND");
      const target = caller.id === body.memberId ? caller : await tx.member.findUnique({ where: { id: body.memberId } });
      if (!target) throw badRequest("MEMBER_NOT_FOUND");
      if (target.organizationId !== organizationId) throw forbidden("YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_MEMBER");
      const callerOwner = isOwner(caller.role);
      const demotesOwner = isOwner(target.role) && !isOwner(body.role);
      if ((isOwner(target.role) || isOwner(body.role)) && !callerOwner) throw forbidden("YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_MEMBER");
      if (demotesOwner && (await countOwners(tx, organizationId)) <= 1)
        throw badRequest("YOU_CANNOT_LEAVE_THE_ORGANIZATION_WITHOUT_AN_OWNER");
      if (!callerOwner && !may(caller.role, "member", "update")) throw forbidden("YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_MEMBER");
      const updated = await tx.member.update({ where: { id: target.id }, data: { role: body.role } });
      if (updated.role !== target.role) await organizationWebhooks.memberUpdated(tx, org, updated, target.role);
      return memberView(updated);
    });
  }

  /**
   * POST remove-member: by member id or email, by members with `member:delete` (owners, admins).
   * Only an owner removes an owner, and never the last one. The removed member's sessions stop
   * working in the organization at once.
   */
  async remove(active: ActiveSession, body: RemoveMemberBody): Promise<{ member: MemberView }> {
    const organizationId = body.organizationId ?? active.session.activeOrganizationId;
    if (!organizationId) throw badRequest("NO_ACTIVE_ORGANIZATION");
    return this.#db.$transaction(async (tx) => {
      const org = await lockOrganization(tx, organizationId);
      const caller = org && (await findMember(tx, active.user.id, organizationId));
      if (!caller) throw badRequest("MEMBER_NOT_FOUND");
      let target: MemberRow | null | undefined;
      if (body.memberIdOrEmail.includes("@")) {
        const email = emailSchema.safeParse(body.memberIdOrEmail);
        const user = email.success ? await tx.user.findUnique({ where: { email: email.data }, select: { id: true } }) : null;
        target = user ? await findMember(tx, user.id, organizationId) : undefined;
      } else target = await tx.member.findUnique({ where: { id: body.memberIdOrEmail } });
      if (!target || target.organizationId !== organizationId) throw badRequest("MEMBER_NOT_FOUND");
      if (isOwner(target.role)) {
        if (!isOwner(caller.role)) throw forbidden("YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_MEMBER");
        if ((await countOwners(tx, organizationId)) <= 1) throw badRequest("YOU_CANNOT_LEAVE_THE_ORGANIZATION_AS_THE_ONLY_OWNER");
      }
      if (!may(caller.role, "member", "delete")) throw forbidden("YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_MEMBER");
      await deleteMember(tx, target);
      await organizationWebhooks.memberRemoved(tx, org, target, "removed");
      return { member: memberView(target) };
    });
  }

  /** POST has-permission: whether the caller's role in the organization allows every action asked for. */
  async hasPermission(active: ActiveSession, body: HasPermissionBody): Promise<{ error: null; success: boolean }> {
    const organizationId = body.organizationId ?? active.session.activeOrganizationId;
    if (!organizationId) throw badRequest("NO_ACTIVE_ORGANIZATION");
    const member = await findMember(this.#db, active.user.id, organizationId);
    if (!member) throw forbidden("USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION");
    return { error: null, success: permits(member.role, body.permissions ?? body.permission ?? {}) };
  }

  /** GET get-active-member: the caller's membership in the active organization, with their user. */
  async activeMember(active: ActiveSession): Promise<MemberView> {
    const organizationId = active.session.activeOrganizationId;
    if (!organizationId) throw badRequest("NO_ACTIVE_ORGANIZATION");
    const member = await findMemberWithUser(this.#db, active.user.id, organizationId);
    if (!member) throw badRequest("MEMBER_NOT_FOUND");
    return memberView(member);
  }

  /** GET get-active-member-role: the caller's role, or another member's (`userId`), in the organization. */
  async activeMemberRole(active: ActiveSession, query: OrganizationQuery): Promise<{ role: string }> {
    const organizationId = await this.#organizationOf(active, query);
    const member = await findMember(this.#db, active.user.id, organizationId);
    if (!member) throw forbidden("YOU_ARE_NOT_A_MEMBER_OF_THIS_ORGANIZATION");
    if (!query.userId || query.userId === active.user.id) return { role: member.role };
    const other = await findMember(this.#db, query.userId, organizationId);
    if (!other) throw forbidden("YOU_ARE_NOT_A_MEMBER_OF_THIS_ORGANIZATION");
    return { role: other.role };
  }
}
