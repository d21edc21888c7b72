import { randomUUID } from "node:crypto";
import {
  INVITATION_TTL_MS,
  type InvitationView,
  type InviteMemberBody,
  MEMBERS_PER_ORGANIZATION,
  type MemberView,
  PENDING_INVITATIONS_PER_ORGANIZATION,
} from "@app/contracts";
import type { PrismaClient, User } from "@app/db";
import { AppError } from "@app/http-kit";
import type { MailOutbox } from "../services/mail-outbox.js";
import type { ActiveSession } from "../services/sessions.js";
import { badRequest, forbidden } from "./errors.js";
import { isOwner, may } from "./roles.js";
import { findMember, findMemberWithUser, findOrganization, type InvitationRow, lockOrganization, type Tx } from "./store.js";
import { invitationView, memberView } from "./views.js";
import { organizationWebhooks } from "./webhooks.js";

const MAIL_KIND = "organization-invitation";

/** Whether `user` is the one an invitation was mailed to (addresses are stored normalised: contracts emailSchema). */
const isRecipient = (invitation: InvitationRow, user: User) => invitation.email.toLowerCase() === user.email.toLowerCase();

/**
 * Invitations by mail (better-auth's crud-invites). The invitation's id is its link's secret
 * (`<baseUrl>/accept-invitation/<id>`, a random UUID); only the invited address, signed in and
 * verified, may read, accept or reject it. An invitation works once and for
 * {@link INVITATION_TTL_MS}. The mail names no organization and no inviter.
 */
export class Invitations {
  readonly #db: PrismaClient;
  readonly #now: () => number;
  readonly #outbox: MailOutbox;
  readonly #acceptUrl: string;

  constructor(deps: { prisma: PrismaClient; now: () => number; outbox: MailOutbox; baseUrl: string }) {
    this.#db = deps.prisma;
    this.#now = deps.now;
    this.#outbox = deps.outbox;
    this.#acceptUrl = `${deps.baseUrl.replace(/\/+$/, "")}/accept-invitation/`;
  }

  /**
   * POST invite-member: owners and admins invite an address with a role (owner only by an owner)
   * and optionally teams; `resend` renews a pending invitation's time and mails it again. The
   * invitation and its mail's outbox row are written in one transaction. 503 without mail.
   */
  async invite(active: ActiveSession, body: InviteMemberBody): Promise<InvitationView> {
    if (!this.#outbox.enabled) throw new AppError("mail_unavailable", "mail is not configured (set SMTP_URL)", { expose: true });
    const organizationId = body.organizationId ?? active.session.activeOrganizationId;
    if (!organizationId) throw badRequest("ORGANIZATION_NOT_FOUND");
    const teamIds = body.teamId === undefined ? [] : [...new Set(Array.isArray(body.teamId) ? body.teamId : [body.teamId])];
    // better-auth stores several teams comma-separated in one column.
    if (teamIds.some((id) => id.includes(","))) throw badRequest("INVALID_TEAM_ID");
    const now = this.#now();
    const { invitation, queued } = await this.#db.$transaction(async (tx) => {
      const caller = (await lockOrganization(tx, organizationId)) && (await findMember(tx, active.user.id, organizationId));
      if (!caller) throw badRequest("MEMBER_NOT_FOUND");
      if (!may(caller.role, "invitation", "create")) throw forbidden("YOU_ARE_NOT_ALLOWED_TO_INVITE_USERS_TO_THIS_ORGANIZATION");
      if (isOwner(body.role) && !isOwner(caller.role)) throw forbidden("YOU_ARE_NOT_ALLOWED_TO_INVITE_USER_WITH_THIS_ROLE");
      const invitee = await tx.user.findUnique({ where: { email: body.email }, select: { id: true } });
      if (invitee && (await tx.member.findUnique({ where: { organizationId_userId: { organizationId, userId: invitee.id } } })))
        throw badRequest("USER_IS_ALREADY_A_MEMBER_OF_THIS_ORGANIZATION");
      const live = { organizationId, status: "pending", expiresAt: { gt: new Date(now) } };
      const pending = await tx.invitation.findFirst({ where: { ...live, email: body.email } });
      const expiresAt = new Date(now + INVITATION_TTL_MS);
      if (pending) {
        if (!body.resend) throw badRequest("USER_IS_ALREADY_INVITED_TO_THIS_ORGANIZATION");
        if (isOwner(pending.role) && !isOwner(caller.role)) throw forbidden("YOU_ARE_NOT_ALLOWED_TO_INVITE_USER_WITH_THIS_ROLE");
        const renewed = await tx.invitation.update({ where: { id: pending.id }, data: { expiresAt } });
        return { invitation: renewed, queued: await this.#mail(tx, renewed) };
      }
      if ((await tx.invitation.count({ where: live })) >= PENDING_INVITATIONS_PER_ORGANIZATION) throw forbidden("INVITATION_LIMIT_REACHED");
      if (teamIds.length && (await tx.team.count({ where: { id: { in: teamIds }, organizationId } })) !== teamIds.length)
        throw badRequest("TEAM_NOT_FOUND");
      const created = await tx.invitation.create({
        data: {
          id: randomUUID(),
          organizationId,
          email: body.email,
          role: body.role,
          teamId: teamIds.length ? teamIds.join(",") : null,
          status: "pending",
          expiresAt,
          inviterId: active.user.id,
          createdAt: new Date(now),
        },
      });
      return { invitation: created, queued: await this.#mail(tx, created) };
    });
    if (queued) this.#outbox.wake();
    return invitationView(invitation);
  }

  /** Writes the invitation's mail in `tx`; true when it was queued (the caller wakes the worker after commit). */
  async #mail(tx: Tx, invitation: InvitationRow): Promise<boolean> {
    const outcome = await this.#outbox.enqueueMail(
      { kind: MAIL_KIND, to: invitation.email, body: `${this.#acceptUrl}${invitation.id}` },
      tx,
    );
    return outcome === "queued";
  }

  /**
   * The pending, unexpired invitation `id` for the signed-in user: 400 when there is none, 403
   * when it is someone else's or the user's address is not verified.
   */
  async #forRecipient(
    active: ActiveSession,
    id: string,
    unverified: "accept" | "read",
    tx: Tx | PrismaClient = this.#db,
  ): Promise<InvitationRow> {
    const invitation = await tx.invitation.findUnique({ where: { id } });
    if (invitation?.status !== "pending" || invitation.expiresAt.getTime() <= this.#now()) throw badRequest("INVITATION_NOT_FOUND");
    if (!isRecipient(invitation, active.user)) throw forbidden("YOU_ARE_NOT_THE_RECIPIENT_OF_THE_INVITATION");
    if (!active.user.emailVerified)
      throw forbidden(
        unverified === "accept"
          ? "EMAIL_VERIFICATION_REQUIRED_BEFORE_ACCEPTING_OR_REJECTING_INVITATION"
          : "EMAIL_VERIFICATION_REQUIRED_FOR_INVITATION",
      );
    return invitation;
  }

  /**
   * POST accept-invitation: the invited user, verified, becomes a member with the invitation's
   * role and teams, in one transaction that spends the invitation (of two concurrent uses one
   * wins); the organization (and its team, when there is one) becomes the session's active one.
   */
  async accept(active: ActiveSession, invitationId: string): Promise<{ invitation: InvitationView; member: MemberView }> {
    return this.#db.$transaction(async (tx) => {
      const invitation = await this.#forRecipient(active, invitationId, "accept", tx);
      const { organizationId } = invitation;
      const org = await lockOrganization(tx, organizationId);
      if (!org) throw badRequest("ORGANIZATION_NOT_FOUND");
      if (await findMember(tx, active.user.id, organizationId)) throw badRequest("USER_IS_ALREADY_A_MEMBER_OF_THIS_ORGANIZATION");
      if ((await tx.member.count({ where: { organizationId } })) >= MEMBERS_PER_ORGANIZATION)
        throw forbidden("ORGANIZATION_MEMBERSHIP_LIMIT_REACHED");
      const spent = await tx.invitation.updateMany({ where: { id: invitationId, status: "pending" }, data: { status: "accepted" } });
      if (spent.count !== 1) throw badRequest("INVITATION_NOT_FOUND");
      const member = await tx.member.create({ data: { id: randomUUID(), organizationId, userId: active.user.id, role: invitation.role } });
      const wanted = invitation.teamId ? invitation.teamId.split(",") : [];
      const teams = wanted.length ? await tx.team.findMany({ where: { id: { in: wanted }, organizationId }, select: { id: true } }) : [];
      if (teams.length)
        await tx.teamMember.createMany({
          data: teams.map((t) => ({ id: randomUUID(), teamId: t.id, userId: active.user.id })),
          skipDuplicates: true,
        });
      await tx.session.updateMany({
        where: { id: active.session.id },
        data: { activeOrganizationId: organizationId, activeTeamId: teams.length === 1 ? (teams[0]?.id ?? null) : null },
      });
      await organizationWebhooks.memberAdded(tx, org, member);
      return { invitation: invitationView({ ...invitation, status: "accepted" }), member: memberView(member) };
    });
  }

  /** POST reject-invitation: the invited user, verified, declines; the invitation is spent. */
  async reject(active: ActiveSession, invitationId: string): Promise<{ invitation: InvitationView; member: null }> {
    const invitation = await this.#forRecipient(active, invitationId, "accept");
    if (!(await findOrganization(this.#db, { id: invitation.organizationId }))) throw badRequest("ORGANIZATION_NOT_FOUND");
    const spent = await this.#db.invitation.updateMany({ where: { id: invitationId, status: "pending" }, data: { status: "rejected" } });
    if (spent.count !== 1) throw badRequest("INVITATION_NOT_FOUND");
    return { invitation: invitationView({ ...invitation, status: "rejected" }), member: null };
  }

  /** POST cancel-invitation: owners and admins withdraw a pending invitation (one granting owner: owners only). */
  async cancel(active: ActiveSession, invitationId: string): Promise<InvitationView> {
    const invitation = await this.#db.invitation.findUnique({ where: { id: invitationId } });
    if (!invitation) throw badRequest("INVITATION_NOT_FOUND");
    const caller = await findMember(this.#db, active.user.id, invitation.organizationId);
    if (!caller) throw badRequest("MEMBER_NOT_FOUND");
    if (!may(caller.role, "invitation", "cancel") || (isOwner(invitation.role) && !isOwner(caller.role)))
      throw forbidden("YOU_ARE_NOT_ALLOWED_TO_CANCEL_THIS_INVITATION");
    const spent = await this.#db.invitation.updateMany({ where: { id: invitationId, status: "pending" }, data: { status: "canceled" } });
    if (spent.count !== 1) throw badRequest("INVITATION_NOT_FOUND");
    return invitationView({ ...invitation, status: "canceled" });
  }

  /** GET get-invitation: the invitation for its verified recipient, with the organization's name and slug and the inviter's email. */
  async get(
    active: ActiveSession,
    id: string,
  ): Promise<InvitationView & { organizationName: string; organizationSlug: string; inviterEmail: string }> {
    const invitation = await this.#forRecipient(active, id, "read");
    const org = await findOrganization(this.#db, { id: invitation.organizationId });
    if (!org) throw badRequest("ORGANIZATION_NOT_FOUND");
    const inviter = await findMemberWithUser(this.#db, invitation.inviterId, org.id);
    if (!inviter) throw badRequest("INVITER_IS_NO_LONGER_A_MEMBER_OF_THE_ORGANIZATION");
    return { ...invitationView(invitation), organizationName: org.name, organizationSlug: org.slug, inviterEmail: inviter.user.email };
  }

  /** GET list-invitations: every invitation of the organization, for members who may invite (owner ones for owners). */
  async list(active: ActiveSession, organizationIdQuery: string | undefined): Promise<InvitationView[]> {
    const organizationId = organizationIdQuery ?? active.session.activeOrganizationId;
    if (!organizationId) throw new AppError("bad_request", "Organization ID is required");
    const member = await findMember(this.#db, active.user.id, organizationId);
    if (!member) throw forbidden("YOU_ARE_NOT_A_MEMBER_OF_THIS_ORGANIZATION");
    if (!may(member.role, "invitation", "create")) throw forbidden("YOU_ARE_NOT_ALLOWED_TO_LIST_INVITATIONS");
    const rows = await this.#db.invitation.findMany({ where: { organizationId }, orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
    const owner = isOwner(member.role);
    return rows.filter((i) => owner || !isOwner(i.role)).map(invitationView);
  }

  /** GET list-user-invitations: the verified user's pending, unexpired invitations, with each organization's name. */
  async listForUser(active: ActiveSession): Promise<(InvitationView & { organizationName: string })[]> {
    if (!active.user.emailVerified) throw forbidden("EMAIL_VERIFICATION_REQUIRED_FOR_INVITATION");
    const rows = await this.#db.invitation.findMany({
      where: { email: active.user.email.toLowerCase(), status: "pending", expiresAt: { gt: new Date(this.#now()) } },
      include: { organization: { select: { name: true } } },
      orderBy: [{ createdAt: "asc" }, { id: "asc" }],
    });
    const pending = new Set(
      (
        await this.#db.organizationDeletion.findMany({
          where: { organizationId: { in: rows.map((r) => r.organizationId) } },
          select: { organizationId: true },
        })
      ).map((d) => d.organizationId),
    );
    return rows
      .filter((row) => !pending.has(row.organizationId))
      .map(({ organization, ...row }) => ({ ...invitationView(row), organizationName: organization.name }));
  }
}
