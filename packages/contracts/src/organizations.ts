import { z } from "zod";
import { cleanString, emailSchema, imageSchema, nameSchema } from "./auth.js";

// The wire of organizations, members, invitations and teams, as better-auth 1.7's `organization`
// plugin with `teams: { enabled: true }`, so its `organizationClient` works unchanged:
// apps/identity/src/organizations/. Timestamps are ISO strings, as better-auth's JSON answers.

/** The roles of a member, from most to least powerful; `owner` is better-auth's creator role. */
export const ORGANIZATION_ROLES = ["owner", "admin", "member"] as const;
export type OrganizationRole = (typeof ORGANIZATION_ROLES)[number];
/** Organizations one user may belong to when creating one (better-auth's `organizationLimit`). */
export const ORGANIZATIONS_PER_USER = 20;
/** Members of one organization (better-auth's `membershipLimit`). */
export const MEMBERS_PER_ORGANIZATION = 100;
/** Pending invitations of one organization (better-auth's `invitationLimit`). */
export const PENDING_INVITATIONS_PER_ORGANIZATION = 100;
/** Teams of one organization (better-auth's `teams.maximumTeams`). */
export const TEAMS_PER_ORGANIZATION = 50;
/** How long an invitation may be accepted (better-auth's `invitationExpiresIn`, 48 hours). */
export const INVITATION_TTL_MS = 48 * 60 * 60 * 1000;
/**
 * The channel identity NOTIFYs, with the organization's id as payload, in the transaction that
 * writes its `organization_deletion` row; the API deletes the organization's rows and files.
 */
export const ORGANIZATION_DELETED_CHANNEL = "auth_organization_deleted";

const id = (field: string) => cleanString(field).min(1, `${field} is required`).max(128, `${field} is too long`);

/** A slug: trimmed, lower-cased, 1 to 64 letters, digits and inner hyphens (it names the organization in URLs). */
export const organizationSlugSchema = cleanString("slug")
  .trim()
  .toLowerCase()
  .regex(/^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/, "slug is 1 to 64 letters, digits and hyphens, not starting or ending with one");

/** Free metadata of an organization, at most 4 KB as JSON. */
const metadataSchema = z
  .record(z.string(), z.unknown())
  .refine((value) => JSON.stringify(value).length <= 4_096, "metadata is larger than 4 KB");

/** One role or several (`"admin,member"` or `["admin", "member"]`), normalised to better-auth's stored form. */
export const roleInputSchema = z
  .union([cleanString("role"), z.array(cleanString("role")).max(3)])
  .transform((value) =>
    [...new Set((Array.isArray(value) ? value : [value]).flatMap((r) => r.split(",")).map((r) => r.trim()))].filter(Boolean),
  )
  .refine((roles) => roles.length > 0, "role is required")
  .refine(
    (roles) => roles.every((r) => (ORGANIZATION_ROLES as readonly string[]).includes(r)),
    "Role not found: a role is owner, admin or member",
  )
  .transform((roles) => roles.join(","));

const optionalId = (field: string) => id(field).optional();

export const createOrganizationBody = z.strictObject({
  name: nameSchema,
  slug: organizationSlugSchema,
  logo: imageSchema.nullish(),
  metadata: metadataSchema.optional(),
  keepCurrentActiveOrganization: z.boolean().optional(),
});
export type CreateOrganizationBody = z.infer<typeof createOrganizationBody>;

export const checkSlugBody = z.strictObject({ slug: organizationSlugSchema });

export const updateOrganizationBody = z.strictObject({
  data: z.strictObject({
    name: nameSchema.optional(),
    slug: organizationSlugSchema.optional(),
    logo: imageSchema.nullish(),
    metadata: metadataSchema.optional(),
  }),
  organizationId: optionalId("organizationId"),
});
export type UpdateOrganizationBody = z.infer<typeof updateOrganizationBody>;

export const organizationIdBody = z.strictObject({ organizationId: id("organizationId") });

export const setActiveOrganizationBody = z.strictObject({
  organizationId: id("organizationId").nullable().optional(),
  organizationSlug: organizationSlugSchema.optional(),
});
export type SetActiveOrganizationBody = z.infer<typeof setActiveOrganizationBody>;

/** A page size in a query (strings on the wire). */
const limitQuery = z.coerce.number().int().min(1).max(MEMBERS_PER_ORGANIZATION).optional();

export const fullOrganizationQuery = z.strictObject({
  organizationId: optionalId("organizationId"),
  organizationSlug: organizationSlugSchema.optional(),
  membersLimit: limitQuery,
});
export type FullOrganizationQuery = z.infer<typeof fullOrganizationQuery>;

export const listMembersQuery = z.strictObject({
  limit: limitQuery,
  offset: z.coerce.number().int().min(0).max(100_000).optional(),
  sortBy: z.enum(["createdAt", "role", "id", "userId"]).optional(),
  sortDirection: z.enum(["asc", "desc"]).optional(),
  filterField: z.enum(["role", "userId"]).optional(),
  filterValue: cleanString("filterValue").max(128).optional(),
  filterOperator: z.enum(["eq", "ne"]).optional(),
  organizationId: optionalId("organizationId"),
  organizationSlug: organizationSlugSchema.optional(),
});
export type ListMembersQuery = z.infer<typeof listMembersQuery>;

export const organizationQuery = z.strictObject({
  organizationId: optionalId("organizationId"),
  organizationSlug: organizationSlugSchema.optional(),
  userId: optionalId("userId"),
});
export type OrganizationQuery = z.infer<typeof organizationQuery>;

export const updateMemberRoleBody = z.strictObject({
  role: roleInputSchema,
  memberId: id("memberId"),
  organizationId: optionalId("organizationId"),
});
export type UpdateMemberRoleBody = z.infer<typeof updateMemberRoleBody>;

export const removeMemberBody = z.strictObject({
  memberIdOrEmail: id("memberIdOrEmail"),
  organizationId: optionalId("organizationId"),
});
export type RemoveMemberBody = z.infer<typeof removeMemberBody>;

const permissionsSchema = z.record(z.string().max(32), z.array(z.string().max(32)).max(16));
/** Body of has-permission: `permissions` (or better-auth's deprecated `permission`), exactly one. */
export const hasPermissionBody = z
  .strictObject({
    organizationId: optionalId("organizationId"),
    permissions: permissionsSchema.optional(),
    permission: permissionsSchema.optional(),
  })
  .refine((b) => (b.permissions === undefined) !== (b.permission === undefined), "give permissions (or permission), exactly one");
export type HasPermissionBody = z.infer<typeof hasPermissionBody>;

export const inviteMemberBody = z.strictObject({
  email: emailSchema,
  role: roleInputSchema,
  organizationId: optionalId("organizationId"),
  resend: z.boolean().optional(),
  teamId: z.union([id("teamId"), z.array(id("teamId")).max(10)]).optional(),
});
export type InviteMemberBody = z.infer<typeof inviteMemberBody>;

export const invitationIdBody = z.strictObject({ invitationId: id("invitationId") });
export const invitationQuery = z.strictObject({ id: id("id") });
export const listInvitationsQuery = z.strictObject({ organizationId: optionalId("organizationId") });
/** list-user-invitations takes no `email` from a client (better-auth refuses it outside the server). */
export const listUserInvitationsQuery = z.strictObject({});

/** A team's name, as an organization's. */
export const teamNameSchema = nameSchema;
export const createTeamBody = z.strictObject({ name: teamNameSchema, organizationId: optionalId("organizationId") });
export const updateTeamBody = z.strictObject({
  teamId: id("teamId"),
  data: z.strictObject({ name: teamNameSchema.optional(), organizationId: optionalId("organizationId") }),
});
export const removeTeamBody = z.strictObject({ teamId: id("teamId"), organizationId: optionalId("organizationId") });
export const setActiveTeamBody = z.strictObject({ teamId: id("teamId").nullable().optional() });
export const teamMemberBody = z.strictObject({ teamId: id("teamId"), userId: id("userId"), organizationId: optionalId("organizationId") });
export const listTeamsQuery = z.strictObject({ organizationId: optionalId("organizationId") });
export const listTeamMembersQuery = z.strictObject({ teamId: optionalId("teamId") });
export const listUserTeamsQuery = z.strictObject({ userId: optionalId("userId"), organizationId: optionalId("organizationId") });

// Answers.

/** An organization; `metadata` is an object in create's and update's answers, the stored JSON text elsewhere (better-auth 1.7). */
export const organizationSchema = z.object({
  id: z.string(),
  name: z.string(),
  slug: z.string(),
  logo: z.string().nullable().optional(),
  metadata: z
    .union([z.string(), z.record(z.string(), z.unknown())])
    .nullable()
    .optional(),
  createdAt: z.string(),
});
export type OrganizationView = z.infer<typeof organizationSchema>;

/** The public fields of a member's user. */
export const memberUserSchema = z.object({ id: z.string(), name: z.string(), email: z.string(), image: z.string().nullable().optional() });

export const memberSchema = z.object({
  id: z.string(),
  organizationId: z.string(),
  userId: z.string(),
  role: z.string(),
  createdAt: z.string(),
  user: memberUserSchema.optional(),
});
export type MemberView = z.infer<typeof memberSchema>;

export const invitationSchema = z.object({
  id: z.string(),
  organizationId: z.string(),
  email: z.string(),
  role: z.string(),
  status: z.enum(["pending", "accepted", "rejected", "canceled"]),
  teamId: z.string().nullable().optional(),
  inviterId: z.string(),
  expiresAt: z.string(),
  createdAt: z.string(),
});
export type InvitationView = z.infer<typeof invitationSchema>;

export const teamSchema = z.object({
  id: z.string(),
  name: z.string(),
  organizationId: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type TeamView = z.infer<typeof teamSchema>;

export const teamMemberSchema = z.object({ id: z.string(), teamId: z.string(), userId: z.string(), createdAt: z.string() });
export type TeamMemberView = z.infer<typeof teamMemberSchema>;

export const createOrganizationResponse = organizationSchema.extend({ members: z.array(memberSchema) });
export const fullOrganizationResponse = organizationSchema
  .extend({ members: z.array(memberSchema), invitations: z.array(invitationSchema), teams: z.array(teamSchema) })
  .nullable();
export type FullOrganizationView = z.infer<typeof fullOrganizationResponse>;
export const nullableOrganizationResponse = organizationSchema.nullable();
export const organizationListResponse = z.array(organizationSchema);
export const checkSlugResponse = z.object({ status: z.literal(true) });
export const listMembersResponse = z.object({ members: z.array(memberSchema), total: z.number().int() });
export const removeMemberResponse = z.object({ member: memberSchema });
export const memberRoleResponse = z.object({ role: z.string() });
export const hasPermissionResponse = z.object({ error: z.null(), success: z.boolean() });
export const acceptInvitationResponse = z.object({ invitation: invitationSchema, member: memberSchema });
export const rejectInvitationResponse = z.object({ invitation: invitationSchema, member: z.null() });
export const invitationDetailsResponse = invitationSchema.extend({
  organizationName: z.string(),
  organizationSlug: z.string(),
  inviterEmail: z.string(),
});
export const invitationListResponse = z.array(invitationSchema);
export const userInvitationListResponse = z.array(invitationSchema.extend({ organizationName: z.string() }));
export const teamListResponse = z.array(teamSchema);
export const nullableTeamResponse = teamSchema.nullable();
export const teamMemberListResponse = z.array(teamMemberSchema);
/** remove-team's and remove-team-member's answer. */
export const teamMessageResponse = z.object({ message: z.string() });
