import { randomUUID } from "node:crypto";
import {
  type CreateOrganizationBody,
  type FullOrganizationQuery,
  type FullOrganizationView,
  ORGANIZATIONS_PER_USER,
  type OrganizationView,
  type SetActiveOrganizationBody,
  type UpdateOrganizationBody,
} from "@app/contracts";
import { isUniqueViolation, type PrismaClient } from "@app/db";
import type { ActiveSession } from "../services/sessions.js";
import { requestOrganizationDeletion } from "./deletion.js";
import { badRequest, forbidden } from "./errors.js";
import { isOwner, may, OWNER } from "./roles.js";
import {
  countOwners,
  deleteMember,
  findMember,
  findMemberWithUser,
  findOrganization,
  lockOrganization,
  MEMBER_USER,
  type OrganizationRow,
} from "./store.js";
import { invitationView, memberView, organizationView, teamView } from "./views.js";
import { organizationWebhooks } from "./webhooks.js";

/** First argument of the per-user advisory lock (two-key form) that serialises a user's creations. */
const CREATE_LOCK_CLASS = 0x6f726773;

/** The organization's rows without `metadata` JSON parsed, for the views. */
const ORG_FIELDS = { id: true, name: true, slug: true, logo: true, metadata: true, createdAt: true } as const;

/**
 * Organizations themselves (better-auth's crud-org and leave): create with its owner and default
 * team, check a slug, update, delete through the outbox, list, read in full, set active, leave.
 * The active organization lives on the session row, never in the JWT.
 */
export class Organizations {
  readonly #db: PrismaClient;

  constructor(deps: { prisma: PrismaClient }) {
    this.#db = deps.prisma;
  }

  /**
   * POST create: the organization, its creator as owner, a default team named as the
   * organization with the creator in it (better-auth's `teams.defaultTeam`), and both active on
   * the session unless `keepCurrentActiveOrganization`. A user who already belongs to
   * {@link ORGANIZATIONS_PER_USER} organizations gets 403.
   */
  async create(
    active: ActiveSession,
    body: CreateOrganizationBody,
  ): Promise<OrganizationView & { members: ReturnType<typeof memberView>[] }> {
    const { session, user } = active;
    try {
      return await this.#db.$transaction(async (tx) => {
        await tx.$executeRaw`SELECT pg_advisory_xact_lock(${CREATE_LOCK_CLASS}::int, hashtext(${user.id}))`;
        const [row] = await tx.$queryRaw<{ n: number }[]>`
          SELECT count(*)::int AS "n" FROM "member" m WHERE m."user_id" = ${user.id}
            AND NOT EXISTS (SELECT 1 FROM "organization_deletion" d WHERE d."organization_id" = m."organization_id")`;
        if ((row?.n ?? 0) >= ORGANIZATIONS_PER_USER) throw forbidden("YOU_HAVE_REACHED_THE_MAXIMUM_NUMBER_OF_ORGANIZATIONS");
        if (await tx.organization.findUnique({ where: { slug: body.slug }, select: { id: true } }))
          throw badRequest("ORGANIZATION_ALREADY_EXISTS");
        const org = await tx.organization.create({
          data: {
            id: randomUUID(),
            name: body.name,
            slug: body.slug,
            logo: body.logo ?? null,
            metadata: body.metadata === undefined ? null : JSON.stringify(body.metadata),
          },
          select: ORG_FIELDS,
        });
        const member = await tx.member.create({ data: { id: randomUUID(), organizationId: org.id, userId: user.id, role: OWNER } });
        const team = await tx.team.create({ data: { id: randomUUID(), name: org.name, organizationId: org.id } });
        await tx.teamMember.create({ data: { id: randomUUID(), teamId: team.id, userId: user.id } });
        if (!body.keepCurrentActiveOrganization)
          await tx.session.updateMany({ where: { id: session.id }, data: { activeOrganizationId: org.id, activeTeamId: team.id } });
        await organizationWebhooks.created(tx, org);
        await organizationWebhooks.memberAdded(tx, org, member);
        return { ...organizationView(org, true), members: [memberView(member)] };
      });
    } catch (error) {
      // Two creations of one slug at once: the unique index refuses the second.
      if (isUniqueViolation(error)) throw badRequest("ORGANIZATION_ALREADY_EXISTS");
      throw error;
    }
  }

  /** POST check-slug: `{ status: true }` when free; 400 when taken (an organization pending deletion keeps it until it is gone). */
  async checkSlug(slug: string): Promise<{ status: true }> {
    if (await this.#db.organization.findUnique({ where: { slug }, select: { id: true } }))
      throw badRequest("ORGANIZATION_SLUG_ALREADY_TAKEN");
    return { status: true };
  }

  /** POST update: owners and admins change name, slug, logo and metadata (an `organization.updated` webhook with it). */
  async update(active: ActiveSession, body: UpdateOrganizationBody): Promise<OrganizationView> {
    const organizationId = body.organizationId ?? active.session.activeOrganizationId;
    if (!organizationId) throw badRequest("ORGANIZATION_NOT_FOUND");
    const member = await findMember(this.#db, active.user.id, organizationId);
    if (!member) throw badRequest("USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION");
    if (!may(member.role, "organization", "update")) throw forbidden("YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_ORGANIZATION");
    const { data } = body;
    if (data.slug !== undefined) {
      const taken = await this.#db.organization.findUnique({ where: { slug: data.slug }, select: { id: true } });
      if (taken && taken.id !== organizationId) throw badRequest("ORGANIZATION_SLUG_ALREADY_TAKEN");
    }
    try {
      const org = await this.#db.$transaction(async (tx) => {
        const updated = await tx.organization.update({
          where: { id: organizationId },
          data: {
            ...(data.name !== undefined ? { name: data.name } : {}),
            ...(data.slug !== undefined ? { slug: data.slug } : {}),
            ...(data.logo !== undefined ? { logo: data.logo } : {}),
            ...(data.metadata !== undefined ? { metadata: JSON.stringify(data.metadata) } : {}),
          },
          select: ORG_FIELDS,
        });
        await organizationWebhooks.updated(tx, updated);
        return updated;
      });
      return organizationView(org, true);
    } catch (error) {
      if (isUniqueViolation(error)) throw badRequest("ORGANIZATION_SLUG_ALREADY_TAKEN");
      throw error;
    }
  }

  /**
   * POST delete: owners only. The organization is locked and its deletion written to the outbox
   * with its NOTIFY in one transaction (organizations/deletion.ts); from then on it is gone.
   */
  async remove(active: ActiveSession, organizationId: string): Promise<OrganizationView> {
    return this.#db.$transaction(async (tx) => {
      const org = await lockOrganization(tx, organizationId);
      const member = org && (await findMember(tx, active.user.id, organizationId));
      if (!org || !member) throw badRequest("USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION");
      if (!may(member.role, "organization", "delete")) throw forbidden("YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_ORGANIZATION");
      await requestOrganizationDeletion(tx, org);
      return organizationView(org);
    });
  }

  /** GET list: the user's live organizations, in the order they joined them. */
  async list(userId: string): Promise<OrganizationView[]> {
    const rows = await this.#db.$queryRaw<OrganizationRow[]>`
      SELECT o."id", o."name", o."slug", o."logo", o."metadata", o."created_at" AS "createdAt"
      FROM "member" m JOIN "organization" o ON o."id" = m."organization_id"
      WHERE m."user_id" = ${userId}
        AND NOT EXISTS (SELECT 1 FROM "organization_deletion" d WHERE d."organization_id" = o."id")
      ORDER BY m."created_at", o."id"`;
    return rows.map((row) => organizationView(row));
  }

  /**
   * GET get-full-organization: the organization (by id, slug, or the active one; null without
   * any), its members with their users, its teams, and its invitations for a member who may
   * invite (those granting owner only for owners). 403 for a non-member, whose session stops
   * pointing at it.
   */
  async full(active: ActiveSession, query: FullOrganizationQuery): Promise<FullOrganizationView> {
    const key = query.organizationSlug ?? query.organizationId ?? active.session.activeOrganizationId;
    if (!key) return null;
    const org = await findOrganization(this.#db, query.organizationSlug ? { slug: query.organizationSlug } : { id: key });
    if (!org) throw badRequest("ORGANIZATION_NOT_FOUND");
    const member = await findMember(this.#db, active.user.id, org.id);
    if (!member) {
      await this.#leaveActive(active, org.id);
      throw forbidden("USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION");
    }
    const [members, teams, invitations] = await Promise.all([
      this.#db.member.findMany({
        where: { organizationId: org.id },
        include: { user: MEMBER_USER },
        orderBy: [{ createdAt: "asc" }, { id: "asc" }],
        take: query.membersLimit ?? 100,
      }),
      this.#db.team.findMany({ where: { organizationId: org.id }, orderBy: [{ createdAt: "asc" }, { id: "asc" }] }),
      may(member.role, "invitation", "create")
        ? this.#db.invitation.findMany({ where: { organizationId: org.id }, orderBy: [{ createdAt: "asc" }, { id: "asc" }] })
        : Promise.resolve([]),
    ]);
    const owner = isOwner(member.role);
    return {
      ...organizationView(org),
      members: members.map(memberView),
      invitations: invitations.filter((i) => owner || !isOwner(i.role)).map(invitationView),
      teams: teams.map(teamView),
    };
  }

  /**
   * POST set-active: by id or slug; `organizationId: null` unsets it; neither answers the active
   * one. A non-member gets 403 and loses the active organization. The active team is kept only
   * while the organization stays the same.
   */
  async setActive(active: ActiveSession, body: SetActiveOrganizationBody): Promise<OrganizationView | null> {
    const { session } = active;
    if (body.organizationId === null || (!body.organizationId && !body.organizationSlug && !session.activeOrganizationId)) {
      if (session.activeOrganizationId) await this.#setActive(session.id, null, null);
      return null;
    }
    let organizationId = body.organizationId ?? undefined;
    if (!organizationId && body.organizationSlug) {
      const bySlug = await findOrganization(this.#db, { slug: body.organizationSlug });
      if (!bySlug) throw badRequest("ORGANIZATION_NOT_FOUND");
      organizationId = bySlug.id;
    }
    organizationId ??= session.activeOrganizationId ?? "";
    if (!(await findMember(this.#db, active.user.id, organizationId))) {
      await this.#leaveActive(active, organizationId, true);
      throw forbidden("USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION");
    }
    const org = await findOrganization(this.#db, { id: organizationId });
    if (!org) throw badRequest("ORGANIZATION_NOT_FOUND");
    const team = session.activeOrganizationId === org.id ? session.activeTeamId : null;
    await this.#setActive(session.id, org.id, team);
    return organizationView(org);
  }

  /**
   * POST leave: the member leaves with their team memberships, and none of their sessions works
   * in the organization any more; the only owner cannot leave (400).
   */
  async leave(active: ActiveSession, organizationId: string): Promise<ReturnType<typeof memberView>> {
    return this.#db.$transaction(async (tx) => {
      const org = await lockOrganization(tx, organizationId);
      const member = org && (await findMemberWithUser(tx, active.user.id, organizationId));
      if (!member) throw badRequest("MEMBER_NOT_FOUND");
      if (isOwner(member.role) && (await countOwners(tx, organizationId)) <= 1)
        throw badRequest("YOU_CANNOT_LEAVE_THE_ORGANIZATION_AS_THE_ONLY_OWNER");
      await deleteMember(tx, member);
      await organizationWebhooks.memberRemoved(tx, org, member, "left");
      return memberView(member);
    });
  }

  async #setActive(sessionId: string, organizationId: string | null, teamId: string | null): Promise<void> {
    await this.#db.session.updateMany({ where: { id: sessionId }, data: { activeOrganizationId: organizationId, activeTeamId: teamId } });
  }

  /** Unsets the session's active organization when it is `organizationId` (or, with `always`, whatever it is), as better-auth does for a non-member. */
  async #leaveActive(active: ActiveSession, organizationId: string, always = false): Promise<void> {
    if (active.session.activeOrganizationId && (always || active.session.activeOrganizationId === organizationId))
      await this.#setActive(active.session.id, null, null);
  }
}
