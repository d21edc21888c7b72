import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { MailKit } from "./mail-kit.js";
import { createOrg, fresh, invite, join, orgKit, type Person, person } from "./organization-kit.js";

// The organization webhooks (organizations/webhooks.ts), written to the outbox in the change's
// transaction: ids, the organization's name and slug and roles, never an invitation's id (its
// link's secret) nor the address of someone who is not a member.
let kit: MailKit;

beforeAll(async () => {
  ({ kit } = await orgKit());
});
afterAll(async () => {
  await kit?.close();
});

interface Hook {
  id: string;
  type: string;
  data: { organization: { id: string; name: string; slug: string }; member?: { id: string; userId: string; role: string } } & Record<
    string,
    unknown
  >;
}

/** The organization's webhook messages, oldest first. */
async function hooksOf(organizationId: string): Promise<Hook[]> {
  const rows = await kit.db.prisma.webhookMessage.findMany({
    where: { type: { startsWith: "organization." } },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
  });
  return rows
    .map((row) => ({ id: row.id, type: row.type, data: (row.payload as { data: Hook["data"] }).data }))
    .filter((hook) => hook.data.organization.id === organizationId);
}

describe("organization webhooks", () => {
  let owner: Person;
  let member: Person;
  let org: { id: string; slug: string; members: { id: string }[] };

  beforeAll(async () => {
    owner = await person(kit);
    member = await person(kit);
  });

  it("create: organization.created and the owner's organization.member_added", async () => {
    org = await createOrg(owner, "Acme Webhooks");
    const hooks = await hooksOf(org.id);
    expect(hooks.map((h) => h.type).sort()).toEqual(["organization.created", "organization.member_added"]);
    const created = hooks.find((h) => h.type === "organization.created");
    expect(created?.data).toEqual({ organization: { id: org.id, name: "Acme Webhooks", slug: org.slug } });
    const added = hooks.find((h) => h.type === "organization.member_added");
    expect(added?.data.member).toEqual({ id: org.members[0]?.id, userId: owner.id, role: "owner" });
  });

  it("update: organization.updated with the new name; a refused update writes nothing", async () => {
    const before = (await hooksOf(org.id)).length;
    await owner.post("update", { organizationId: org.id, data: { name: "Acme Renamed" } }).expect(200);
    await member.post("update", { organizationId: org.id, data: { name: "Not a member" } }).expect(400);
    const hooks = (await hooksOf(org.id)).slice(before);
    expect(hooks.map((h) => [h.type, h.data.organization.name])).toEqual([["organization.updated", "Acme Renamed"]]);
  });

  it("an accepted invitation is organization.member_added with ids and role, never the invitation or a non-member's address", async () => {
    const stranger = fresh("never-joins");
    const pending = await invite(kit, owner, org.id, stranger);
    const memberId = await join(kit, owner, org.id, member, "admin");
    const hooks = await hooksOf(org.id);
    const added = hooks.filter((h) => h.type === "organization.member_added").at(-1);
    expect(added?.data).toEqual({
      organization: { id: org.id, name: "Acme Renamed", slug: org.slug },
      member: { id: memberId, userId: member.id, role: "admin" },
    });
    const written = JSON.stringify(await kit.db.prisma.webhookMessage.findMany());
    expect(written).not.toContain(pending);
    expect(written).not.toContain(stranger);
    const invitationIds = (await kit.db.prisma.invitation.findMany({ where: { organizationId: org.id } })).map((i) => i.id);
    for (const id of invitationIds) expect(written).not.toContain(id);
  });

  it("a role change is organization.member_updated with the previous role; the same role writes nothing", async () => {
    const memberRow = await kit.db.prisma.member.findFirstOrThrow({ where: { organizationId: org.id, userId: member.id } });
    const before = (await hooksOf(org.id)).length;
    await owner.post("update-member-role", { organizationId: org.id, memberId: memberRow.id, role: "member" }).expect(200);
    await owner.post("update-member-role", { organizationId: org.id, memberId: memberRow.id, role: "member" }).expect(200);
    const hooks = (await hooksOf(org.id)).slice(before);
    expect(hooks.map((h) => [h.type, h.data.member?.role, h.data.previousRole])).toEqual([
      ["organization.member_updated", "member", "admin"],
    ]);
  });

  it("removal and leaving are organization.member_removed with their reason", async () => {
    const memberRow = await kit.db.prisma.member.findFirstOrThrow({ where: { organizationId: org.id, userId: member.id } });
    const before = (await hooksOf(org.id)).length;
    await owner.post("remove-member", { organizationId: org.id, memberIdOrEmail: memberRow.id }).expect(200);
    const leaver = await person(kit);
    await join(kit, owner, org.id, leaver);
    await leaver.post("leave", { organizationId: org.id }).expect(200);
    const hooks = (await hooksOf(org.id)).slice(before);
    expect(hooks.map((h) => [h.type, h.data.member?.userId, h.data.reason ?? null])).toEqual([
      ["organization.member_removed", member.id, "removed"],
      ["organization.member_added", leaver.id, null],
      ["organization.member_removed", leaver.id, "left"],
    ]);
  });

  it("a member's account deletion is organization.member_removed; deleting the organization is organization.deleted", async () => {
    const leaving = await person(kit);
    await join(kit, owner, org.id, leaving);
    const before = (await hooksOf(org.id)).length;
    await request(kit.app)
      .post("/api/auth/delete-user")
      .set("cookie", leaving.cookie)
      .set("origin", "http://localhost:5173")
      .send({ password: "correct horse battery" })
      .expect(200);
    await owner.post("delete", { organizationId: org.id }).expect(200);
    const hooks = (await hooksOf(org.id)).slice(before);
    expect(hooks.map((h) => [h.type, h.data.member?.userId ?? null, h.data.reason ?? null])).toEqual([
      ["organization.member_removed", leaving.id, "account_deleted"],
      ["organization.deleted", null, null],
    ]);
    expect(hooks[1]?.data).toEqual({ organization: { id: org.id, name: "Acme Renamed", slug: org.slug } });
  });

  it("an owner's account deletion deletes the organization they alone belong to: organization.deleted", async () => {
    const solo = await person(kit);
    const own = await createOrg(solo, "Solo");
    await request(kit.app)
      .post("/api/auth/delete-user")
      .set("cookie", solo.cookie)
      .set("origin", "http://localhost:5173")
      .send({ password: "correct horse battery" })
      .expect(200);
    expect((await hooksOf(own.id)).map((h) => h.type).sort()).toEqual([
      "organization.created",
      "organization.deleted",
      "organization.member_added",
    ]);
  });
});
