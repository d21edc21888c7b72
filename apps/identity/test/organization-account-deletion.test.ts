import { isAppError } from "@app/http-kit";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkAccountDeletion, leaveOrganizationsForAccountDeletion } from "../src/organizations/account-deletion.js";
import type { MailKit } from "./mail-kit.js";
import { createOrg, join, orgKit, person } from "./organization-kit.js";

// The organizations' part of deleting an account (organizations/account-deletion.ts, called by
// delete-user in its transaction): the only owner of an organization with other members is
// refused (409), an organization the user is alone in is deleted with the account, and the user
// leaves every other organization.

let kit: MailKit;
beforeAll(async () => {
  ({ kit } = await orgKit());
});
afterAll(async () => {
  await kit?.close();
});

/** The refusal of `run`, as [status, code], or "ok". */
async function outcome(run: () => Promise<void>): Promise<[number, string] | "ok"> {
  try {
    await run();
    return "ok";
  } catch (error) {
    if (isAppError(error)) return [error.status, error.code];
    throw error;
  }
}

const leave = (userId: string) => () => kit.db.prisma.$transaction((tx) => leaveOrganizationsForAccountDeletion(tx, userId));

describe("deleting the account of an organization's owner", () => {
  it("refuses the only owner of an organization with other members, until another member is an owner", async () => {
    const owner = await person(kit);
    const member = await person(kit);
    const org = await createOrg(owner, "Shared");
    const memberId = await join(kit, owner, org.id, member);
    expect(await outcome(() => checkAccountDeletion(kit.db.prisma, owner.id))).toEqual([409, "conflict"]);
    expect(await outcome(leave(owner.id))).toEqual([409, "conflict"]);
    expect(await kit.db.prisma.member.count({ where: { organizationId: org.id } })).toBe(2);
    // A member (not an owner) leaves freely.
    expect(await outcome(() => checkAccountDeletion(kit.db.prisma, member.id))).toBe("ok");

    await owner.post("update-member-role", { organizationId: org.id, memberId, role: "owner" }).expect(200);
    expect(await outcome(() => checkAccountDeletion(kit.db.prisma, owner.id))).toBe("ok");
    expect(await outcome(leave(owner.id))).toBe("ok");
    expect(await kit.db.prisma.member.findMany({ where: { organizationId: org.id }, select: { userId: true } })).toEqual([
      { userId: member.id },
    ]);
    expect(await kit.db.prisma.organizationDeletion.count({ where: { organizationId: org.id } })).toBe(0);
  });

  it("deletes an organization the user is alone in (outbox row), and ends their memberships and team memberships", async () => {
    const owner = await person(kit);
    const other = await person(kit);
    const alone = await createOrg(owner, "Solo");
    const shared = await createOrg(other, "Theirs");
    await join(kit, other, shared.id, owner, "admin");
    expect(await outcome(leave(owner.id))).toBe("ok");
    expect(await kit.db.prisma.organizationDeletion.count({ where: { organizationId: alone.id } })).toBe(1);
    expect(await kit.db.prisma.member.count({ where: { userId: owner.id } })).toBe(0);
    expect(await kit.db.prisma.teamMember.count({ where: { userId: owner.id } })).toBe(0);
    expect(await kit.db.prisma.organizationDeletion.count({ where: { organizationId: shared.id } })).toBe(0);
    expect((await other.get(`list-members?organizationId=${shared.id}`).expect(200)).body.total).toBe(1);
  });

  it("delete-user answers 409 for the only owner of an organization with other members, and deletes once another member owns it", async () => {
    const owner = await person(kit);
    const member = await person(kit);
    const org = await createOrg(owner, "Kept");
    const memberId = await join(kit, owner, org.id, member);
    const remove = () =>
      request(kit.app).post("/api/auth/delete-user").set("cookie", owner.cookie).send({ password: "correct horse battery" });
    const refused = await remove();
    expect([refused.status, refused.body.code]).toEqual([409, "conflict"]);
    expect(refused.body.message).toContain('"Kept"');
    expect(await kit.db.prisma.userDeletion.count({ where: { userId: owner.id } })).toBe(0);
    await owner.post("update-member-role", { organizationId: org.id, memberId, role: "owner" }).expect(200);
    expect((await remove()).status).toBe(200);
    expect(await kit.db.prisma.member.count({ where: { userId: owner.id } })).toBe(0);
  });
});
