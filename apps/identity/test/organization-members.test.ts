import { randomUUID } from "node:crypto";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sessionCookie } from "./kit.js";
import type { MailKit } from "./mail-kit.js";
import { as, createOrg, fresh, join, orgKit, type Person, person, refusal, sessionOf } from "./organization-kit.js";

// Members and roles: an organization always keeps an owner, an admin cannot remove or demote an
// owner, a member cannot invite; membership changes apply at once (the removed member's sessions
// lose the organization). Real PostgreSQL, invitations through the real SMTP catcher.

let kit: MailKit;
beforeAll(async () => {
  ({ kit } = await orgKit());
});
afterAll(async () => {
  await kit?.close();
});

/** An organization with an owner, an admin and a member, each joined through a mailed invitation. */
async function team3() {
  const [owner, admin, member] = [await person(kit), await person(kit), await person(kit)];
  const org = await createOrg(owner);
  const ownerMember = org.members[0]?.id ?? "";
  const adminMember = await join(kit, owner, org.id, admin, "admin");
  const memberMember = await join(kit, owner, org.id, member, "member");
  return { owner, admin, member, org, ids: { owner: ownerMember, admin: adminMember, member: memberMember } };
}

const roleOf = async (by: Person, organizationId: string) =>
  (await by.get(`get-active-member-role?organizationId=${organizationId}`).expect(200)).body.role;

describe("the owner is kept", () => {
  it("the last owner cannot leave, be removed or demoted; with a second owner each of those works", async () => {
    const { owner, admin, org, ids } = await team3();
    expect(refusal(await owner.post("leave", { organizationId: org.id }))).toEqual([
      400,
      "You cannot leave the organization as the only owner",
    ]);
    expect(refusal(await owner.post("remove-member", { organizationId: org.id, memberIdOrEmail: ids.owner }))).toEqual([
      400,
      "You cannot leave the organization as the only owner",
    ]);
    expect(refusal(await owner.post("update-member-role", { organizationId: org.id, memberId: ids.owner, role: "admin" }))).toEqual([
      400,
      "You cannot leave the organization without an owner",
    ]);
    // An owner makes the admin an owner; then the first owner may step down and leave.
    await owner.post("update-member-role", { organizationId: org.id, memberId: ids.admin, role: "owner" }).expect(200);
    expect(await roleOf(admin, org.id)).toBe("owner");
    expect(
      (await owner.post("update-member-role", { organizationId: org.id, memberId: ids.owner, role: "admin" }).expect(200)).body,
    ).toMatchObject({
      id: ids.owner,
      role: "admin",
    });
    await owner.post("leave", { organizationId: org.id }).expect(200);
    expect(refusal(await admin.post("leave", { organizationId: org.id }))).toEqual([
      400,
      "You cannot leave the organization as the only owner",
    ]);
  });

  it("two owners demoting each other at once leave one owner: the organization is locked for each change", async () => {
    for (let round = 0; round < 3; round += 1) {
      const { owner, admin, org, ids } = await team3();
      await owner.post("update-member-role", { organizationId: org.id, memberId: ids.admin, role: "owner" }).expect(200);
      const [a, b] = await Promise.all([
        owner.post("update-member-role", { organizationId: org.id, memberId: ids.admin, role: "member" }),
        admin.post("update-member-role", { organizationId: org.id, memberId: ids.owner, role: "member" }),
      ]);
      // The second sees the first's change: one owner left (400), or no longer an owner itself (403).
      expect([a.status, b.status].filter((status) => status === 200)).toHaveLength(1);
      expect([a.status, b.status].every((status) => [200, 400, 403].includes(status))).toBe(true);
      const owners = await kit.db.prisma.member.count({ where: { organizationId: org.id, role: "owner" } });
      expect(owners).toBe(1);
    }
  });

  it("an admin cannot remove or demote an owner, nor make anyone an owner; a member cannot change roles or remove", async () => {
    const { owner, admin, member, org, ids } = await team3();
    const body = { organizationId: org.id };
    expect(refusal(await admin.post("remove-member", { ...body, memberIdOrEmail: ids.owner }))).toEqual([
      403,
      "You are not allowed to delete this member",
    ]);
    expect(refusal(await admin.post("remove-member", { ...body, memberIdOrEmail: owner.email }))).toEqual([
      403,
      "You are not allowed to delete this member",
    ]);
    expect(refusal(await admin.post("update-member-role", { ...body, memberId: ids.owner, role: "member" }))).toEqual([
      403,
      "You are not allowed to update this member",
    ]);
    expect(refusal(await admin.post("update-member-role", { ...body, memberId: ids.member, role: "owner" }))).toEqual([
      403,
      "You are not allowed to update this member",
    ]);
    expect(refusal(await member.post("update-member-role", { ...body, memberId: ids.member, role: "admin" }))).toEqual([
      403,
      "You are not allowed to update this member",
    ]);
    expect(refusal(await member.post("remove-member", { ...body, memberIdOrEmail: ids.admin }))).toEqual([
      403,
      "You are not allowed to delete this member",
    ]);
    expect(
      (await admin.post("update-member-role", { ...body, memberId: ids.member, role: ["admin", "member"] }).expect(200)).body.role,
    ).toBe("admin,member");
    expect((await owner.post("update-member-role", { ...body, memberId: ids.member, role: "nope" })).status).toBe(400);
    expect(await roleOf(owner, org.id)).toBe("owner");
  });

  it("a member cannot invite; has-permission answers each role's rights", async () => {
    const { owner, admin, member, org } = await team3();
    expect(refusal(await member.post("invite-member", { organizationId: org.id, email: fresh("x"), role: "member" }))).toEqual([
      403,
      "You are not allowed to invite users to this organization",
    ]);
    expect(refusal(await admin.post("invite-member", { organizationId: org.id, email: fresh("x"), role: "owner" }))).toEqual([
      403,
      "You are not allowed to invite a user with this role",
    ]);
    const ask = async (who: Person, permissions: Record<string, string[]>) =>
      (await who.post("has-permission", { organizationId: org.id, permissions }).expect(200)).body;
    expect(await ask(owner, { organization: ["delete"] })).toEqual({ error: null, success: true });
    expect(await ask(admin, { organization: ["delete"] })).toEqual({ error: null, success: false });
    expect(await ask(admin, { invitation: ["create"], member: ["delete"] })).toEqual({ error: null, success: true });
    expect(await ask(member, { invitation: ["create"] })).toEqual({ error: null, success: false });
    expect(await ask(member, { constructor: ["name"] })).toEqual({ error: null, success: false });
    const stranger = await person(kit, { verified: false });
    expect(refusal(await stranger.post("has-permission", { organizationId: org.id, permissions: { member: ["create"] } }))).toEqual([
      403,
      "User is not a member of the organization",
    ]);
  });
});

describe("listing and removing members", () => {
  it("lists members a page at a time with their users, filtered by role; get-active-member answers the caller's membership", async () => {
    const { owner, admin, member, org, ids } = await team3();
    const all = (await member.get(`list-members?organizationId=${org.id}`).expect(200)).body;
    expect(all.total).toBe(3);
    expect(all.members.map((m: { user: { email: string } }) => m.user.email)).toEqual([owner.email, admin.email, member.email]);
    const page = (await owner.get(`list-members?organizationId=${org.id}&limit=1&offset=1`).expect(200)).body;
    expect([page.total, page.members.map((m: { id: string }) => m.id)]).toEqual([3, [ids.admin]]);
    const admins = (await owner.get(`list-members?organizationId=${org.id}&filterField=role&filterValue=admin`).expect(200)).body;
    expect([admins.total, admins.members[0].userId]).toEqual([1, admin.id]);
    expect(
      (await owner.get(`list-members?organizationSlug=${org.slug}&sortBy=createdAt&sortDirection=desc`).expect(200)).body.members[0].id,
    ).toBe(ids.member);
    expect((await owner.get("list-members?limit=1000")).status).toBe(400);
    const stranger = await person(kit, { verified: false });
    expect(refusal(await stranger.get(`list-members?organizationId=${org.id}`))).toEqual([
      403,
      "You are not a member of this organization",
    ]);
    expect(refusal(await stranger.get("get-active-member"))).toEqual([400, "No active organization"]);
    // The accepted invitation made the organization active for the member.
    expect((await member.get("get-active-member").expect(200)).body).toMatchObject({
      id: ids.member,
      role: "member",
      user: { email: member.email },
    });
  });

  it("a removed member loses the organization in every session at once, and with it every team", async () => {
    const { owner, admin, member, org, ids } = await team3();
    // A second session of the member (another device), working in the organization too.
    const signIn = await request(kit.app)
      .post("/api/auth/sign-in/email")
      .send({ email: member.email, password: "correct horse battery" })
      .expect(200);
    const second = as(kit, member.id, member.email, sessionCookie(signIn) ?? "");
    await second.post("set-active", { organizationId: org.id }).expect(200);
    expect((await sessionOf(kit, second)).activeOrganizationId).toBe(org.id);
    expect((await sessionOf(kit, member)).activeOrganizationId).toBe(org.id);

    const [defaultTeam] = (await owner.get(`list-teams?organizationId=${org.id}`).expect(200)).body;
    await owner.post("add-team-member", { organizationId: org.id, teamId: defaultTeam.id, userId: member.id }).expect(200);
    await second.post("set-active-team", { teamId: defaultTeam.id }).expect(200);
    expect((await sessionOf(kit, second)).activeTeamId).toBe(defaultTeam.id);

    const removed = await admin.post("remove-member", { organizationId: org.id, memberIdOrEmail: member.email }).expect(200);
    expect(removed.body.member).toMatchObject({ id: ids.member, userId: member.id });
    for (const who of [member, second]) expect(await sessionOf(kit, who)).toMatchObject({ activeOrganizationId: null, activeTeamId: null });
    expect(refusal(await member.get(`get-full-organization?organizationId=${org.id}`))).toEqual([
      403,
      "User is not a member of the organization",
    ]);
    expect(await kit.db.prisma.teamMember.count({ where: { userId: member.id } })).toBe(0);
    expect(refusal(await owner.post("remove-member", { organizationId: org.id, memberIdOrEmail: randomUUID() }))).toEqual([
      400,
      "Member not found",
    ]);
    // Leaving works the same way for the one who leaves.
    const left = await admin.post("leave", { organizationId: org.id }).expect(200);
    expect(left.body).toMatchObject({ id: ids.admin, user: { email: admin.email } });
    expect((await sessionOf(kit, admin)).activeOrganizationId).toBeNull();
    expect((await owner.get(`list-members?organizationId=${org.id}`).expect(200)).body.total).toBe(1);
  });
});
