import { randomUUID } from "node:crypto";
import { TEAMS_PER_ORGANIZATION } from "@app/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { MailKit } from "./mail-kit.js";
import { createOrg, fresh, invite, join, orgKit, person, refusal, sessionOf } from "./organization-kit.js";

// Teams (better-auth's `teams: { enabled: true }`): owners and admins create, rename and remove
// teams and put members in them; members list them and work in one of theirs (the session's
// active team); an invitation may name teams the invitee joins on acceptance.

let kit: MailKit;
beforeAll(async () => {
  ({ kit } = await orgKit());
});
afterAll(async () => {
  await kit?.close();
});

describe("teams", () => {
  it("create, rename, list, add and remove members, set active, list a team's members, remove a team", async () => {
    const owner = await person(kit);
    const member = await person(kit);
    const org = await createOrg(owner);
    await join(kit, owner, org.id, member);
    const body = { organizationId: org.id };

    const design = (await owner.post("create-team", { ...body, name: "Design" }).expect(200)).body;
    expect(design).toMatchObject({ name: "Design", organizationId: org.id });
    expect(refusal(await member.post("create-team", { ...body, name: "Mine" }))).toEqual([
      403,
      "You are not allowed to create teams in this organization",
    ]);
    const renamed = (
      await owner.post("update-team", { teamId: design.id, data: { name: "Product design", organizationId: org.id } }).expect(200)
    ).body;
    expect(renamed).toMatchObject({ id: design.id, name: "Product design" });
    expect(refusal(await member.post("update-team", { teamId: design.id, data: { name: "x", organizationId: org.id } }))).toEqual([
      403,
      "You are not allowed to update this team",
    ]);
    expect((await member.get(`list-teams?organizationId=${org.id}`).expect(200)).body.map((t: { name: string }) => t.name)).toEqual([
      "Acme",
      "Product design",
    ]);

    expect(refusal(await member.post("set-active-team", { teamId: design.id }))).toEqual([403, "User is not a member of the team"]);
    const added = (await owner.post("add-team-member", { ...body, teamId: design.id, userId: member.id }).expect(200)).body;
    expect(added).toMatchObject({ teamId: design.id, userId: member.id });
    expect(refusal(await member.post("add-team-member", { ...body, teamId: design.id, userId: owner.id }))).toEqual([
      403,
      "You are not allowed to create a new member",
    ]);
    expect((await member.post("set-active-team", { teamId: design.id }).expect(200)).body.id).toBe(design.id);
    expect(await sessionOf(kit, member)).toMatchObject({ activeOrganizationId: org.id, activeTeamId: design.id });
    expect((await member.get("list-team-members").expect(200)).body.map((m: { userId: string }) => m.userId)).toEqual([member.id]);
    expect((await member.get("list-user-teams").expect(200)).body.map((t: { id: string }) => t.id)).toEqual([design.id]);
    expect((await owner.get(`list-user-teams?userId=${member.id}&organizationId=${org.id}`).expect(200)).body).toHaveLength(1);
    expect(refusal(await member.get(`list-user-teams?userId=${owner.id}&organizationId=${org.id}`))).toEqual([
      403,
      "You are not allowed to update this member",
    ]);

    expect((await owner.post("remove-team-member", { ...body, teamId: design.id, userId: member.id }).expect(200)).body).toEqual({
      message: "Team member removed successfully.",
    });
    expect((await sessionOf(kit, member)).activeTeamId).toBeNull();
    expect(refusal(await owner.post("remove-team-member", { ...body, teamId: design.id, userId: member.id }))).toEqual([
      400,
      "User is not a member of the team",
    ]);
    expect((await member.post("set-active-team", { teamId: null }).expect(200)).body).toBeNull();

    // The owner's active team (the default one) cannot be removed by them; another team can.
    const [defaultTeam] = (await owner.get("list-teams").expect(200)).body;
    expect(refusal(await owner.post("remove-team", { ...body, teamId: defaultTeam.id }))).toEqual([
      403,
      "You are not allowed to delete this team",
    ]);
    expect((await owner.post("remove-team", { ...body, teamId: design.id }).expect(200)).body).toEqual({
      message: "Team removed successfully.",
    });
    expect((await owner.get("list-teams").expect(200)).body).toHaveLength(1);
    await owner.post("set-active-team", { teamId: null }).expect(200);
    expect(refusal(await owner.post("remove-team", { ...body, teamId: defaultTeam.id }))).toEqual([400, "Unable to remove last team"]);
    expect(refusal(await owner.post("remove-team", { ...body, teamId: randomUUID() }))).toEqual([400, "Team not found"]);
  });

  it("an invitation names teams the invitee joins, made active when there is one; a removed team leaves pending invitations", async () => {
    const owner = await person(kit);
    const org = await createOrg(owner);
    const ops = (await owner.post("create-team", { organizationId: org.id, name: "Ops" }).expect(200)).body;
    const gone = (await owner.post("create-team", { organizationId: org.id, name: "Gone" }).expect(200)).body;
    const email = fresh("teamed");
    const res = await owner.post("invite-member", { organizationId: org.id, email, role: "member", teamId: [ops.id, gone.id] }).expect(200);
    expect(res.body.teamId).toBe(`${ops.id},${gone.id}`);
    await owner.post("remove-team", { organizationId: org.id, teamId: gone.id }).expect(200);
    expect((await kit.db.prisma.invitation.findUniqueOrThrow({ where: { id: res.body.id } })).teamId).toBe(ops.id);
    expect(
      refusal(await owner.post("invite-member", { organizationId: org.id, email: fresh("x"), role: "member", teamId: randomUUID() })),
    ).toEqual([400, "Team not found"]);

    const invitee = await person(kit, { email });
    await invitee.post("accept-invitation", { invitationId: res.body.id }).expect(200);
    expect(await sessionOf(kit, invitee)).toMatchObject({ activeOrganizationId: org.id, activeTeamId: ops.id });
    expect((await invitee.get("list-user-teams").expect(200)).body.map((t: { id: string }) => t.id)).toEqual([ops.id]);
    expect(await invite(kit, owner, org.id, fresh("plain"))).toEqual(expect.any(String));
  });

  it(`stops at ${TEAMS_PER_ORGANIZATION} teams per organization`, async () => {
    const owner = await person(kit, { verified: false });
    const org = await createOrg(owner);
    await kit.db.prisma.team.createMany({
      data: Array.from({ length: TEAMS_PER_ORGANIZATION - 1 }, (_, i) => ({ id: randomUUID(), name: `T${i}`, organizationId: org.id })),
    });
    expect(refusal(await owner.post("create-team", { organizationId: org.id, name: "One too many" }))).toEqual([
      400,
      "You have reached the maximum number of teams",
    ]);
  });
});
