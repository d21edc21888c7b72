import {
  acceptInvitationResponse,
  type checkSlugBody,
  checkSlugResponse,
  type createOrganizationBody,
  createOrganizationResponse,
  type createTeamBody,
  type FullOrganizationQuery,
  type FullOrganizationView,
  fullOrganizationResponse,
  type InvitationView,
  invitationDetailsResponse,
  invitationListResponse,
  invitationSchema,
  type inviteMemberBody,
  type ListMembersQuery,
  listMembersResponse,
  type MemberView,
  memberSchema,
  nullableOrganizationResponse,
  type OrganizationView,
  organizationListResponse,
  organizationSchema,
  rejectInvitationResponse,
  type removeMemberBody,
  removeMemberResponse,
  sessionResponse,
  type TeamMemberView,
  type TeamView,
  teamListResponse,
  teamMemberListResponse,
  teamMemberSchema,
  teamMessageResponse,
  teamSchema,
  type updateMemberRoleBody,
  type updateOrganizationBody,
  type updateTeamBody,
  userInvitationListResponse,
} from "@app/contracts";
import type { z } from "zod";
import type { Http } from "./http.js";
import { type IdentityCallOptions, identityJson } from "./sign-in.js";

/** An organization with its members, pending invitations and teams (get-full-organization). */
export type FullOrganization = NonNullable<FullOrganizationView>;
/** An invitation as its recipient sees it before answering: with the organization's name and the inviter's address. */
export type InvitationDetails = z.output<typeof invitationDetailsResponse>;
/** An invitation to the signed-in user, with the organization's name. */
export type UserInvitation = z.output<typeof userInvitationListResponse>[number];

/** Where a call acts: an organization by id (the session's active one when left out). */
export interface InOrganization {
  organizationId?: string;
}

/**
 * Organizations, members, invitations and teams: better-auth 1.7's `organization` wire
 * (apps/identity/src/organizations/), called with the session cookie. Calls that name no
 * organization act in the session's active one ({@link OrganizationApi.setActive}), which lives on
 * the session, never in the JWT: the API reads memberships on every request, so a change here
 * applies to the next API call with the same JWT. Refusals are {@link ApiError}s: `forbidden` (a
 * role too weak, not a member) and `bad_request` with better-auth's sentence as `message`.
 */
export interface OrganizationApi {
  /** Founds an organization (the caller becomes its owner) and makes it active unless `keepCurrentActiveOrganization`. */
  create(body: z.input<typeof createOrganizationBody>): Promise<OrganizationView & { members: MemberView[] }>;
  /** Resolves when the slug is free; a taken one is a 400 `bad_request`. */
  checkSlug(body: z.input<typeof checkSlugBody>): Promise<void>;
  /** Renames or changes an organization (admins and owners). */
  update(body: z.input<typeof updateOrganizationBody>): Promise<OrganizationView>;
  /** Deletes an organization and, at the API, its projects and what they hold (owners). */
  delete(body: { organizationId: string }): Promise<OrganizationView>;
  /** The organizations the signed-in user belongs to. */
  list(): Promise<OrganizationView[]>;
  /** One organization (default: the active one) with members, invitations and teams; null when none is active. */
  getFullOrganization(query?: FullOrganizationQuery): Promise<FullOrganization | null>;
  /** Sets the session's active organization (by id or slug), or clears it with `{ organizationId: null }`. */
  setActive(body: { organizationId?: string | null; organizationSlug?: string }): Promise<OrganizationView | null>;
  /** The active organization's id, as get-session says (null without one or without a session). */
  activeId(): Promise<string | null>;
  /** Leaves an organization (its only owner cannot). */
  leave(body: { organizationId: string }): Promise<MemberView>;
  /** Members, with their public user fields, and how many there are. */
  listMembers(query?: ListMembersQuery): Promise<{ members: MemberView[]; total: number }>;
  /** Changes a member's role (`owner`, `admin`, `member`; admins and owners, owners for owner). */
  updateMemberRole(body: z.input<typeof updateMemberRoleBody>): Promise<MemberView>;
  /** Removes a member by member id or address; the API refuses their next request. */
  removeMember(body: z.input<typeof removeMemberBody>): Promise<MemberView>;
  /** The caller's own membership in the active organization. */
  getActiveMember(): Promise<MemberView>;
  /** Invites an address with a role; identity mails it a link to the web app's `/accept-invitation/<id>`. */
  inviteMember(body: z.input<typeof inviteMemberBody>): Promise<InvitationView>;
  /** Accepts an invitation to the signed-in user's address: a membership, and that organization becomes active. */
  acceptInvitation(body: { invitationId: string }): Promise<{ invitation: InvitationView; member: MemberView }>;
  /** Declines an invitation to the signed-in user's address. */
  rejectInvitation(body: { invitationId: string }): Promise<InvitationView>;
  /** Withdraws a pending invitation (admins and owners). */
  cancelInvitation(body: { invitationId: string }): Promise<InvitationView>;
  /** An invitation to the signed-in user's address, with the organization's name and the inviter's address. */
  getInvitation(query: { id: string }): Promise<InvitationDetails>;
  /** An organization's invitations (default: the active one). */
  listInvitations(query?: InOrganization): Promise<InvitationView[]>;
  /** The pending invitations to the signed-in user's address. */
  listUserInvitations(): Promise<UserInvitation[]>;
  /** Creates a team (admins and owners). */
  createTeam(body: z.input<typeof createTeamBody>): Promise<TeamView>;
  /** An organization's teams (default: the active one). */
  listTeams(query?: InOrganization): Promise<TeamView[]>;
  /** Renames a team. */
  updateTeam(body: z.input<typeof updateTeamBody>): Promise<TeamView>;
  /** Deletes a team (not the organization's last one). */
  removeTeam(body: { teamId: string } & InOrganization): Promise<void>;
  /** Adds a member of the organization to a team. */
  addTeamMember(body: { teamId: string; userId: string } & InOrganization): Promise<TeamMemberView>;
  /** Takes a user off a team (they stay a member of the organization). */
  removeTeamMember(body: { teamId: string; userId: string } & InOrganization): Promise<void>;
  /** A team's members (default: the active team). */
  listTeamMembers(query?: { teamId?: string }): Promise<TeamMemberView[]>;
}

const query = (values: Record<string, string | number | undefined> = {}): IdentityCallOptions["query"] =>
  Object.fromEntries(Object.entries(values).map(([key, value]) => [key, value === undefined ? undefined : String(value)]));

/** Builds the {@link OrganizationApi} over a transport. */
export function organizationApi(http: Http): OrganizationApi {
  const get = <S extends z.ZodType>(schema: S, path: string, values?: Record<string, string | number | undefined>) =>
    identityJson(http, schema, `/organization${path}`, { query: query(values) });
  const post = <S extends z.ZodType>(schema: S, path: string, body: unknown) =>
    identityJson(http, schema, `/organization${path}`, { body });
  return {
    create: (body) => post(createOrganizationResponse, "/create", body),
    checkSlug: async (body) => {
      await post(checkSlugResponse, "/check-slug", body);
    },
    update: (body) => post(organizationSchema, "/update", body),
    delete: (body) => post(organizationSchema, "/delete", body),
    list: () => get(organizationListResponse, "/list"),
    getFullOrganization: (values) => get(fullOrganizationResponse, "/get-full-organization", values),
    setActive: (body) => post(nullableOrganizationResponse, "/set-active", body),
    activeId: async () => (await identityJson(http, sessionResponse.nullable(), "/get-session"))?.session.activeOrganizationId ?? null,
    leave: (body) => post(memberSchema, "/leave", body),
    listMembers: (values) => get(listMembersResponse, "/list-members", values),
    updateMemberRole: (body) => post(memberSchema, "/update-member-role", body),
    removeMember: async (body) => (await post(removeMemberResponse, "/remove-member", body)).member,
    getActiveMember: () => get(memberSchema, "/get-active-member"),
    inviteMember: (body) => post(invitationSchema, "/invite-member", body),
    acceptInvitation: (body) => post(acceptInvitationResponse, "/accept-invitation", body),
    rejectInvitation: async (body) => (await post(rejectInvitationResponse, "/reject-invitation", body)).invitation,
    cancelInvitation: (body) => post(invitationSchema, "/cancel-invitation", body),
    getInvitation: (values) => get(invitationDetailsResponse, "/get-invitation", values),
    listInvitations: (values) => get(invitationListResponse, "/list-invitations", { ...values }),
    listUserInvitations: () => get(userInvitationListResponse, "/list-user-invitations"),
    createTeam: (body) => post(teamSchema, "/create-team", body),
    listTeams: (values) => get(teamListResponse, "/list-teams", { ...values }),
    updateTeam: (body) => post(teamSchema, "/update-team", body),
    removeTeam: async (body) => {
      await post(teamMessageResponse, "/remove-team", body);
    },
    addTeamMember: (body) => post(teamMemberSchema, "/add-team-member", body),
    removeTeamMember: async (body) => {
      await post(teamMessageResponse, "/remove-team-member", body);
    },
    listTeamMembers: (values) => get(teamMemberListResponse, "/list-team-members", { ...values }),
  };
}
