import { organizationClient } from "better-auth/client/plugins";
import { describe, expect, it } from "vitest";
import { betterAuthServer } from "./better-auth-kit.js";
import { linkOf, type MailKit, mailKit } from "./mail-kit.js";
import { fresh, ORG_LIMITS } from "./organization-kit.js";

// better-auth's official client with its organizationClient (teams enabled), unchanged, against a
// real identity listening on a free port, with mail over real SMTP to a catcher. It runs in Node,
// so a cookie jar stands in for each browser.

let kit: MailKit;
const server = betterAuthServer(async () => {
  kit = await mailKit({ env: ORG_LIMITS });
  return kit;
});

const PASSWORD = "correct horse battery";

/** One browser with better-auth's client and its organization plugin, signed up and verified through the mailed link. */
async function browser(email: string) {
  const { client } = server.browser([organizationClient({ teams: { enabled: true } })]);
  expect((await client.signUp.email({ email, password: PASSWORD, name: email.split("@")[0] ?? "x" })).error).toBeNull();
  const token = new URL(linkOf(await kit.mailTo(email, "Verify your email address"))).searchParams.get("token") ?? "";
  expect((await client.verifyEmail({ query: { token } })).error).toBeNull();
  return client;
}

/** The data of a client answer, failing the test with its error otherwise. */
function data<T>(answer: { data: T | null; error: unknown }): T {
  expect(answer.error).toBeNull();
  return answer.data as T;
}

describe("better-auth's organizationClient against identity", () => {
  it("drives create, invite, accept, members, roles, active organization, teams, leave, remove and delete", async () => {
    const ownerEmail = fresh("ba-owner");
    const owner = await browser(ownerEmail);
    const slug = `ba-${Date.now()}`;
    expect(data(await owner.organization.checkSlug({ slug }))).toEqual({ status: true });
    const org = data(await owner.organization.create({ name: "Ba Org", slug, metadata: { tier: "free" } }));
    expect(org).toMatchObject({ name: "Ba Org", slug, metadata: { tier: "free" } });
    expect(data(await owner.organization.list()).map((o) => o.id)).toEqual([org.id]);
    expect(data(await owner.getSession()).session).toMatchObject({ activeOrganizationId: org.id });

    // Invite by mail; a second user accepts from the mailed link's id.
    const guestEmail = fresh("ba-guest");
    const invitation = data(await owner.organization.inviteMember({ email: guestEmail, role: "member", organizationId: org.id }));
    const link = linkOf(await kit.mailTo(guestEmail, "You are invited to an organization"));
    expect(link).toBe(`${new URL(kit.config.corsOrigins[0] ?? "").origin}/accept-invitation/${invitation.id}`);
    const guest = await browser(guestEmail);
    const invitationId = link.split("/").at(-1) ?? "";
    expect(data(await guest.organization.getInvitation({ query: { id: invitationId } }))).toMatchObject({ organizationName: "Ba Org" });
    expect(data(await guest.organization.listUserInvitations())).toHaveLength(1);
    const accepted = data(await guest.organization.acceptInvitation({ invitationId }));
    expect(accepted.member).toMatchObject({ organizationId: org.id, role: "member" });
    expect(data(await guest.getSession()).session).toMatchObject({ activeOrganizationId: org.id });

    const { members, total } = data(await owner.organization.listMembers({ query: { organizationId: org.id } }));
    expect(total).toBe(2);
    const guestMember = members.find((m) => m.user.email === guestEmail);
    expect(guestMember).toBeDefined();
    // A member cannot invite: better-auth's client hands over status and message.
    const refused = await guest.organization.inviteMember({ email: fresh("nope"), role: "member", organizationId: org.id });
    expect(refused.error).toMatchObject({ status: 403, message: "You are not allowed to invite users to this organization" });
    const promoted = data(
      await owner.organization.updateMemberRole({ memberId: guestMember?.id ?? "", role: "admin", organizationId: org.id }),
    );
    expect(promoted).toMatchObject({ role: "admin" });
    expect(data(await guest.organization.getActiveMember())).toMatchObject({ role: "admin" });
    expect(data(await guest.organization.hasPermission({ permissions: { invitation: ["create"] } }))).toMatchObject({ success: true });

    // Active organization: unset, then set again, as get-session shows.
    expect(data(await guest.organization.setActive({ organizationId: null }))).toBeNull();
    expect(data(await guest.getSession()).session).toMatchObject({ activeOrganizationId: null });
    expect(data(await guest.organization.setActive({ organizationSlug: slug }))).toMatchObject({ id: org.id });
    const full = data(await guest.organization.getFullOrganization({ query: { organizationId: org.id } }));
    expect(full?.members).toHaveLength(2);

    // Teams.
    const team = data(await owner.organization.createTeam({ name: "Core", organizationId: org.id }));
    expect(data(await owner.organization.listTeams({ query: { organizationId: org.id } })).map((t) => t.name)).toEqual(["Ba Org", "Core"]);
    data(await owner.organization.addTeamMember({ teamId: team.id, userId: accepted.member.userId, organizationId: org.id }));
    expect(data(await guest.organization.setActiveTeam({ teamId: team.id }))).toMatchObject({ id: team.id });
    expect(data(await guest.getSession()).session).toMatchObject({ activeTeamId: team.id });
    expect(data(await guest.organization.listTeamMembers({ query: { teamId: team.id } }))).toHaveLength(1);
    expect(
      data(await owner.organization.removeTeamMember({ teamId: team.id, userId: accepted.member.userId, organizationId: org.id })),
    ).toEqual({
      message: "Team member removed successfully.",
    });
    expect(
      data(await owner.organization.updateTeam({ teamId: team.id, data: { name: "Core team", organizationId: org.id } })),
    ).toMatchObject({
      name: "Core team",
    });
    expect(data(await owner.organization.removeTeam({ teamId: team.id, organizationId: org.id }))).toEqual({
      message: "Team removed successfully.",
    });

    // The guest leaves; invited again, the owner removes them; then the owner deletes the organization.
    data(await guest.organization.leave({ organizationId: org.id }));
    expect(data(await guest.getSession()).session).toMatchObject({ activeOrganizationId: null });
    const again = data(await owner.organization.inviteMember({ email: guestEmail, role: "member", organizationId: org.id }));
    const listed = data(await owner.organization.listInvitations({ query: { organizationId: org.id } }));
    expect(listed.map((i) => i.id)).toContain(again.id);
    data(await guest.organization.acceptInvitation({ invitationId: again.id }));
    const removed = data(await owner.organization.removeMember({ memberIdOrEmail: guestEmail, organizationId: org.id }));
    expect(removed.member).toMatchObject({ organizationId: org.id });
    expect(data(await guest.organization.list())).toEqual([]);

    const cancelMe = data(await owner.organization.inviteMember({ email: fresh("ba-cancel"), role: "member", organizationId: org.id }));
    expect(data(await owner.organization.cancelInvitation({ invitationId: cancelMe.id }))).toMatchObject({ status: "canceled" });
    const rejectMe = data(await owner.organization.inviteMember({ email: guestEmail, role: "member", organizationId: org.id }));
    expect(data(await guest.organization.rejectInvitation({ invitationId: rejectMe.id }))).toMatchObject({ member: null });

    data(await owner.organization.update({ organizationId: org.id, data: { name: "Ba Org 2" } }));
    expect(data(await owner.organization.delete({ organizationId: org.id }))).toMatchObject({ id: org.id });
    expect(data(await owner.organization.list())).toEqual([]);
    expect(data(await owner.getSession()).session).toMatchObject({ activeOrganizationId: null });
    expect(await kit.db.prisma.organizationDeletion.count({ where: { organizationId: org.id } })).toBe(1);
  });
});
