import { randomUUID } from "node:crypto";
import { TEAMS_PER_ORGANIZATION, type TeamMemberView, type TeamView } from "@app/contracts";
import type { PrismaClient } from "@app/db";
import type { ActiveSession } from "../services/sessions.js";
import { badRequest, forbidden, type OrganizationRefusal } from "./errors.js";
import { may } from "./roles.js";
import { findMember, lockOrganization, type MemberRow, type Reader } from "./store.js";
import { teamMemberView, teamView } from "./views.js";

const TEAM_REMOVED = "Team removed successfully.";
const TEAM_MEMBER_REMOVED = "Team member removed successfully.";

/**
 * Teams inside an organization (better-auth's crud-team with `teams: { enabled: true }`): owners
 * and admins create, rename and remove teams and put members in them; a member sees the teams of
 * their organizations and works in one of theirs (the session's active team).
 */
export class Teams {
  readonly #db: PrismaClient;

  constructor(deps: { prisma: PrismaClient }) {
    this.#db = deps.prisma;
  }

  /** The organization named, or the session's active one; 400 without one. */
  #organizationOf(active: ActiveSession, organizationId: string | undefined): string {
    const id = organizationId ?? active.session.activeOrganizationId;
    if (!id) throw badRequest("NO_ACTIVE_ORGANIZATION");
    return id;
  }

  /** The caller's membership, refused with `reason` (403) when absent. */
  async #member(db: Reader, active: ActiveSession, organizationId: string, reason: OrganizationRefusal): Promise<MemberRow> {
    const member = await findMember(db, active.user.id, organizationId);
    if (!member) throw forbidden(reason);
    return member;
  }

  /** The team `teamId` of the organization; 400 when it is not one of its teams. */
  async #team(db: Reader, teamId: string, organizationId: string) {
    const team = await db.team.findFirst({ where: { id: teamId, organizationId } });
    if (!team) throw badRequest("TEAM_NOT_FOUND");
    return team;
  }

  /** POST create-team: at most {@link TEAMS_PER_ORGANIZATION} per organization. */
  async create(active: ActiveSession, body: { name: string; organizationId?: string | undefined }): Promise<TeamView> {
    const organizationId = this.#organizationOf(active, body.organizationId);
    return this.#db.$transaction(async (tx) => {
      if (!(await lockOrganization(tx, organizationId))) throw forbidden("YOU_ARE_NOT_ALLOWED_TO_INVITE_USERS_TO_THIS_ORGANIZATION");
      const member = await this.#member(tx, active, organizationId, "YOU_ARE_NOT_ALLOWED_TO_INVITE_USERS_TO_THIS_ORGANIZATION");
      if (!may(member.role, "team", "create")) throw forbidden("YOU_ARE_NOT_ALLOWED_TO_CREATE_TEAMS_IN_THIS_ORGANIZATION");
      if ((await tx.team.count({ where: { organizationId } })) >= TEAMS_PER_ORGANIZATION)
        throw badRequest("YOU_HAVE_REACHED_THE_MAXIMUM_NUMBER_OF_TEAMS");
      return teamView(await tx.team.create({ data: { id: randomUUID(), name: body.name, organizationId } }));
    });
  }

  /** GET list-teams: the organization's teams, for its members. */
  async list(active: ActiveSession, organizationIdQuery: string | undefined): Promise<TeamView[]> {
    const organizationId = this.#organizationOf(active, organizationIdQuery);
    await this.#member(this.#db, active, organizationId, "YOU_ARE_NOT_ALLOWED_TO_ACCESS_THIS_ORGANIZATION");
    const teams = await this.#db.team.findMany({ where: { organizationId }, orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
    return teams.map(teamView);
  }

  /** POST update-team: renames a team. */
  async update(
    active: ActiveSession,
    body: { teamId: string; data: { name?: string | undefined; organizationId?: string | undefined } },
  ): Promise<TeamView> {
    const organizationId = this.#organizationOf(active, body.data.organizationId);
    const member = await this.#member(this.#db, active, organizationId, "YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_TEAM");
    if (!may(member.role, "team", "update")) throw forbidden("YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_TEAM");
    const team = await this.#team(this.#db, body.teamId, organizationId);
    const updated = await this.#db.team.update({
      where: { id: team.id },
      data: body.data.name === undefined ? {} : { name: body.data.name },
    });
    return teamView(updated);
  }

  /**
   * POST remove-team: never the caller's active team nor the organization's last one; pending
   * invitations forget it and sessions working in it lose it as their active team.
   */
  async remove(active: ActiveSession, body: { teamId: string; organizationId?: string | undefined }): Promise<{ message: string }> {
    const organizationId = this.#organizationOf(active, body.organizationId);
    return this.#db.$transaction(async (tx) => {
      const locked = await lockOrganization(tx, organizationId);
      const member = locked && (await findMember(tx, active.user.id, organizationId));
      if (!member || active.session.activeTeamId === body.teamId) throw forbidden("YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_TEAM");
      if (!may(member.role, "team", "delete")) throw forbidden("YOU_ARE_NOT_ALLOWED_TO_DELETE_TEAMS_IN_THIS_ORGANIZATION");
      const team = await this.#team(tx, body.teamId, organizationId);
      if ((await tx.team.count({ where: { organizationId } })) <= 1) throw badRequest("UNABLE_TO_REMOVE_LAST_TEAM");
      const members = await tx.member.findMany({ where: { organizationId }, select: { userId: true } });
      await tx.team.delete({ where: { id: team.id } });
      const invitations = await tx.invitation.findMany({ where: { organizationId, status: "pending", teamId: { contains: team.id } } });
      for (const invitation of invitations) {
        const rest = (invitation.teamId ?? "").split(",").filter((id) => id !== team.id);
        await tx.invitation.update({ where: { id: invitation.id }, data: { teamId: rest.length ? rest.join(",") : null } });
      }
      await tx.session.updateMany({
        where: { userId: { in: members.map((m) => m.userId) }, activeTeamId: team.id },
        data: { activeTeamId: null },
      });
      return { message: TEAM_REMOVED };
    });
  }

  /** POST set-active-team: one of the caller's teams in the active organization; `teamId: null` unsets it. */
  async setActive(active: ActiveSession, teamIdBody: string | null | undefined): Promise<TeamView | null> {
    const { session } = active;
    const teamId = teamIdBody === null ? null : (teamIdBody ?? session.activeTeamId);
    if (!teamId) {
      if (teamIdBody === null && session.activeTeamId)
        await this.#db.session.updateMany({ where: { id: session.id }, data: { activeTeamId: null } });
      return null;
    }
    const organizationId = session.activeOrganizationId;
    if (!organizationId || !(await findMember(this.#db, active.user.id, organizationId))) throw badRequest("NO_ACTIVE_ORGANIZATION");
    const team = await this.#team(this.#db, teamId, organizationId);
    if (!(await this.#db.teamMember.findUnique({ where: { teamId_userId: { teamId, userId: active.user.id } } })))
      throw forbidden("USER_IS_NOT_A_MEMBER_OF_THE_TEAM");
    await this.#db.session.updateMany({ where: { id: session.id }, data: { activeTeamId: team.id } });
    return teamView(team);
  }

  /** POST add-team-member: owners and admins put a member of the organization in one of its teams. */
  async addMember(
    active: ActiveSession,
    body: { teamId: string; userId: string; organizationId?: string | undefined },
  ): Promise<TeamMemberView> {
    const organizationId = this.#organizationOf(active, body.organizationId);
    return this.#db.$transaction(async (tx) => {
      const caller = (await lockOrganization(tx, organizationId)) && (await findMember(tx, active.user.id, organizationId));
      if (!caller) throw badRequest("USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION");
      if (!may(caller.role, "member", "update")) throw forbidden("YOU_ARE_NOT_ALLOWED_TO_CREATE_A_NEW_TEAM_MEMBER");
      if (!(await findMember(tx, body.userId, organizationId))) throw badRequest("USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION");
      const team = await this.#team(tx, body.teamId, organizationId);
      const row = await tx.teamMember.upsert({
        where: { teamId_userId: { teamId: team.id, userId: body.userId } },
        create: { id: randomUUID(), teamId: team.id, userId: body.userId },
        update: {},
      });
      return teamMemberView(row);
    });
  }

  /** POST remove-team-member: owners and admins take a member out of a team; their sessions lose it as active team. */
  async removeMember(
    active: ActiveSession,
    body: { teamId: string; userId: string; organizationId?: string | undefined },
  ): Promise<{ message: string }> {
    const organizationId = this.#organizationOf(active, body.organizationId);
    return this.#db.$transaction(async (tx) => {
      const caller = (await lockOrganization(tx, organizationId)) && (await findMember(tx, active.user.id, organizationId));
      if (!caller) throw badRequest("USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION");
      if (!may(caller.role, "member", "delete")) throw forbidden("YOU_ARE_NOT_ALLOWED_TO_REMOVE_A_TEAM_MEMBER");
      if (!(await findMember(tx, body.userId, organizationId))) throw badRequest("USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION");
      const team = await this.#team(tx, body.teamId, organizationId);
      const { count } = await tx.teamMember.deleteMany({ where: { teamId: team.id, userId: body.userId } });
      if (count === 0) throw badRequest("USER_IS_NOT_A_MEMBER_OF_THE_TEAM");
      await tx.session.updateMany({ where: { userId: body.userId, activeTeamId: team.id }, data: { activeTeamId: null } });
      return { message: TEAM_MEMBER_REMOVED };
    });
  }

  /**
   * GET list-user-teams: the caller's teams (in one organization with `organizationId`, else in
   * all of theirs); another member's (`userId`) for owners and admins of the organization.
   */
  async listForUser(
    active: ActiveSession,
    query: { userId?: string | undefined; organizationId?: string | undefined },
  ): Promise<TeamView[]> {
    const self = !query.userId || query.userId === active.user.id;
    let organizationIds: string[];
    if (!self || query.organizationId) {
      const organizationId = this.#organizationOf(active, query.organizationId);
      const caller = await this.#member(this.#db, active, organizationId, "YOU_ARE_NOT_A_MEMBER_OF_THIS_ORGANIZATION");
      if (!self) {
        if (!may(caller.role, "member", "update")) throw forbidden("YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_MEMBER");
        if (!(await findMember(this.#db, query.userId ?? "", organizationId))) throw badRequest("USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION");
      }
      organizationIds = [organizationId];
    } else {
      const memberships = await this.#db.$queryRaw<{ organizationId: string }[]>`
        SELECT m."organization_id" AS "organizationId" FROM "member" m WHERE m."user_id" = ${active.user.id}
          AND NOT EXISTS (SELECT 1 FROM "organization_deletion" d WHERE d."organization_id" = m."organization_id")`;
      organizationIds = memberships.map((m) => m.organizationId);
    }
    const teams = await this.#db.team.findMany({
      where: { organizationId: { in: organizationIds }, members: { some: { userId: self ? active.user.id : (query.userId ?? "") } } },
      orderBy: [{ createdAt: "asc" }, { id: "asc" }],
    });
    return teams.map(teamView);
  }

  /** GET list-team-members: the members of a team (or the active one), for the team's own members. */
  async listMembers(active: ActiveSession, teamIdQuery: string | undefined): Promise<TeamMemberView[]> {
    const teamId = teamIdQuery ?? active.session.activeTeamId;
    if (!teamId) throw badRequest("YOU_DO_NOT_HAVE_AN_ACTIVE_TEAM");
    const team = await this.#db.team.findUnique({ where: { id: teamId } });
    if (!team) throw badRequest("TEAM_NOT_FOUND");
    const inOrganization = await findMember(this.#db, active.user.id, team.organizationId);
    const inTeam =
      inOrganization && (await this.#db.teamMember.findUnique({ where: { teamId_userId: { teamId, userId: active.user.id } } }));
    if (!inTeam) throw badRequest("USER_IS_NOT_A_MEMBER_OF_THE_TEAM");
    const rows = await this.#db.teamMember.findMany({ where: { teamId }, orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
    return rows.map(teamMemberView);
  }
}
