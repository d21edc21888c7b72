import { randomUUID } from "node:crypto";
import { INVITATION_TTL_MS, MEMBERS_PER_ORGANIZATION, PENDING_INVITATIONS_PER_ORGANIZATION } from "@app/contracts";
import request from "supertest";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { identityKit, ORIGIN, sessionCookie } from "./kit.js";
import type { MailKit } from "./mail-kit.js";
import { as, createOrg, fresh, invite, orgKit, person, refusal, sessionOf } from "./organization-kit.js";

// Invitations by mail, through real PostgreSQL and real SMTP to a catcher: the mailed link names
// the web app's accept page; only the invited address, signed in and verified, reads, accepts or
// rejects; an invitation works once and for 48 hours; owners and admins list and cancel.

let kit: MailKit;
let clock: { offset: number };
beforeAll(async () => {
  ({ kit, clock } = await orgKit());
});
afterEach(() => {
  clock.offset = 0;
});
afterAll(async () => {
  await kit?.close();
});

describe("an invitation by mail", () => {
  it("mails the accept page's link, names neither organization nor inviter, and the verified invitee accepts it once", async () => {
    const owner = await person(kit);
    const org = await createOrg(owner, "Secret Project");
    const email = fresh("invitee");
    const id = await invite(kit, owner, org.id, email, "admin");
    const mail = await kit.mailTo(email, "You are invited to an organization");
    expect(mail.text).not.toContain("Secret Project");
    expect(mail.text).not.toContain(owner.email);

    // The invitee has no account yet: they sign up with the invited address and verify it.
    const invitee = await person(kit, { email });
    const details = (await invitee.get(`get-invitation?id=${id}`).expect(200)).body;
    expect(details).toMatchObject({
      id,
      email,
      role: "admin",
      status: "pending",
      organizationName: "Secret Project",
      inviterEmail: owner.email,
    });
    expect((await invitee.get("list-user-invitations").expect(200)).body).toEqual([
      expect.objectContaining({ id, organizationName: "Secret Project" }),
    ]);
    const accepted = (await invitee.post("accept-invitation", { invitationId: id }).expect(200)).body;
    expect(accepted.invitation).toMatchObject({ id, status: "accepted" });
    expect(accepted.member).toMatchObject({ userId: invitee.id, organizationId: org.id, role: "admin" });
    expect((await sessionOf(kit, invitee)).activeOrganizationId).toBe(org.id);
    expect(refusal(await invitee.post("accept-invitation", { invitationId: id }))).toEqual([400, "Invitation not found"]);
    expect(refusal(await invitee.post("reject-invitation", { invitationId: id }))).toEqual([400, "Invitation not found"]);
    expect((await invitee.get("list-user-invitations").expect(200)).body).toEqual([]);
    expect(refusal(await owner.post("invite-member", { organizationId: org.id, email, role: "member" }))).toEqual([
      400,
      "User is already a member of this organization",
    ]);
  });

  it("two sessions accepting at once: one joins, the other is refused", async () => {
    const owner = await person(kit);
    const org = await createOrg(owner);
    const email = fresh("twice");
    const id = await invite(kit, owner, org.id, email);
    const invitee = await person(kit, { email });
    const signIn = await request(kit.app).post("/api/auth/sign-in/email").send({ email, password: "correct horse battery" }).expect(200);
    const other = as(kit, invitee.id, email, sessionCookie(signIn) ?? "");
    const answers = await Promise.all([
      invitee.post("accept-invitation", { invitationId: id }),
      other.post("accept-invitation", { invitationId: id }),
    ]);
    expect(answers.map((r) => r.status).sort()).toEqual([200, 400]);
    expect(await kit.db.prisma.member.count({ where: { organizationId: org.id, userId: invitee.id } })).toBe(1);
  });

  it("refuses another signed-in user and the invitee until their address is verified", async () => {
    const owner = await person(kit);
    const org = await createOrg(owner);
    const email = fresh("unverified");
    const id = await invite(kit, owner, org.id, email);
    const other = await person(kit);
    for (const res of [
      await other.post("accept-invitation", { invitationId: id }),
      await other.post("reject-invitation", { invitationId: id }),
      await other.get(`get-invitation?id=${id}`),
    ])
      expect(refusal(res)).toEqual([403, "You are not the recipient of the invitation"]);

    const invitee = await person(kit, { email, verified: false });
    expect(refusal(await invitee.post("accept-invitation", { invitationId: id }))).toEqual([
      403,
      "Email verification required before accepting or rejecting invitation",
    ]);
    expect(refusal(await invitee.get(`get-invitation?id=${id}`))).toEqual([
      403,
      "Email verification required to view or list invitations for the session email",
    ]);
    expect(refusal(await invitee.get("list-user-invitations"))).toEqual([
      403,
      "Email verification required to view or list invitations for the session email",
    ]);
    expect(await kit.db.prisma.member.count({ where: { organizationId: org.id } })).toBe(1);
    expect(refusal(await other.post("accept-invitation", { invitationId: randomUUID() }))).toEqual([400, "Invitation not found"]);
    const signedOut = await request(kit.app).post("/api/auth/organization/accept-invitation").send({ invitationId: id });
    expect([signedOut.status, signedOut.body.code]).toEqual([401, "unauthorized"]);
  });

  it("expires after 48 hours; resend renews it and mails it again", async () => {
    const owner = await person(kit);
    const org = await createOrg(owner);
    const email = fresh("late");
    const id = await invite(kit, owner, org.id, email);
    const invitee = await person(kit, { email });
    expect(refusal(await owner.post("invite-member", { organizationId: org.id, email, role: "member" }))).toEqual([
      400,
      "User is already invited to this organization",
    ]);
    clock.offset = INVITATION_TTL_MS;
    expect(refusal(await invitee.get(`get-invitation?id=${id}`))).toEqual([400, "Invitation not found"]);
    expect(refusal(await invitee.post("accept-invitation", { invitationId: id }))).toEqual([400, "Invitation not found"]);
    expect((await invitee.get("list-user-invitations").expect(200)).body).toEqual([]);

    // Expired, it no longer counts as pending: a new invitation to the address is made and mailed.
    const again = (await owner.post("invite-member", { organizationId: org.id, email, role: "member" }).expect(200)).body;
    expect(again.id).not.toBe(id);
    await kit.catcher.waitFor((m) => m.to.includes(email) && m.links.includes(`${ORIGIN}/accept-invitation/${again.id}`));
    // A second ask renews it with resend.
    clock.offset += INVITATION_TTL_MS - 1_000;
    const after = kit.catcher.messages().at(-1)?.id ?? 0;
    const renewed = (await owner.post("invite-member", { organizationId: org.id, email, role: "member", resend: true }).expect(200)).body;
    expect(renewed.id).toBe(again.id);
    expect(new Date(renewed.expiresAt).getTime()).toBeGreaterThan(new Date(again.expiresAt).getTime());
    await kit.catcher.waitFor((m) => m.id > after && m.links.includes(`${ORIGIN}/accept-invitation/${again.id}`));
    clock.offset += 2_000;
    await invitee.post("accept-invitation", { invitationId: again.id }).expect(200);
  });

  it("owners and admins list and cancel; the invitee rejects; each spends the invitation", async () => {
    const owner = await person(kit);
    const org = await createOrg(owner);
    const adminEmail = fresh("admin");
    const adminId = await invite(kit, owner, org.id, adminEmail, "admin");
    const admin = await person(kit, { email: adminEmail });
    await admin.post("accept-invitation", { invitationId: adminId }).expect(200);

    const toCancel = await invite(kit, admin, org.id, fresh("cancel"));
    const ownerInvite = await invite(kit, owner, org.id, fresh("co-owner"), "owner");
    const rejectEmail = fresh("reject");
    const toReject = await invite(kit, owner, org.id, rejectEmail);

    const byOwner = (await owner.get(`list-invitations?organizationId=${org.id}`).expect(200)).body.map((i: { id: string }) => i.id);
    expect(byOwner).toEqual([adminId, toCancel, ownerInvite, toReject]);
    // An admin sees every invitation but those granting owner.
    const byAdmin = (await admin.get("list-invitations").expect(200)).body.map((i: { id: string }) => i.id);
    expect(byAdmin).toEqual([adminId, toCancel, toReject]);
    expect(refusal(await admin.post("cancel-invitation", { invitationId: ownerInvite }))).toEqual([
      403,
      "You are not allowed to cancel this invitation",
    ]);

    expect((await admin.post("cancel-invitation", { invitationId: toCancel }).expect(200)).body).toMatchObject({
      id: toCancel,
      status: "canceled",
    });
    expect(refusal(await admin.post("cancel-invitation", { invitationId: toCancel }))).toEqual([400, "Invitation not found"]);
    const rejecter = await person(kit, { email: rejectEmail });
    const rejected = (await rejecter.post("reject-invitation", { invitationId: toReject }).expect(200)).body;
    expect(rejected).toMatchObject({ invitation: { id: toReject, status: "rejected" }, member: null });
    expect(refusal(await rejecter.post("accept-invitation", { invitationId: toReject }))).toEqual([400, "Invitation not found"]);

    const member = await person(kit, { verified: false });
    expect(refusal(await member.get(`list-invitations?organizationId=${org.id}`))).toEqual([
      403,
      "You are not a member of this organization",
    ]);
  });
});

describe("caps and mail", () => {
  it(`answers 403 past ${PENDING_INVITATIONS_PER_ORGANIZATION} pending invitations and past ${MEMBERS_PER_ORGANIZATION} members`, async () => {
    const owner = await person(kit);
    const org = await createOrg(owner);
    const expiresAt = new Date(Date.now() + INVITATION_TTL_MS);
    await kit.db.prisma.invitation.createMany({
      data: Array.from({ length: PENDING_INVITATIONS_PER_ORGANIZATION }, (_, i) => ({
        id: randomUUID(),
        organizationId: org.id,
        email: `seed-${i}-${org.id}@example.com`,
        role: "member",
        status: "pending",
        expiresAt,
        inviterId: owner.id,
      })),
    });
    expect(refusal(await owner.post("invite-member", { organizationId: org.id, email: fresh("over"), role: "member" }))).toEqual([
      403,
      "Invitation limit reached",
    ]);
    const seeded = await kit.db.prisma.invitation.findFirstOrThrow({ where: { organizationId: org.id, email: { startsWith: "seed-0-" } } });
    await owner.post("cancel-invitation", { invitationId: seeded.id }).expect(200);
    const email = fresh("last-seat");
    const id = await invite(kit, owner, org.id, email);

    // Members up to the cap (seeded as accounts of their own), then the invitee cannot join.
    const users = Array.from({ length: MEMBERS_PER_ORGANIZATION - 1 }, (_, i) => ({
      id: randomUUID(),
      email: `m-${i}-${org.id}@example.com`,
      name: "M",
    }));
    await kit.db.prisma.user.createMany({ data: users });
    await kit.db.prisma.member.createMany({
      data: users.map((u) => ({ id: randomUUID(), organizationId: org.id, userId: u.id, role: "member" })),
    });
    const invitee = await person(kit, { email });
    expect(refusal(await invitee.post("accept-invitation", { invitationId: id }))).toEqual([403, "Organization membership limit reached"]);
    expect((await invitee.get(`get-invitation?id=${id}`).expect(200)).body.status).toBe("pending");
  });

  it("answers 503 mail_unavailable without SMTP and writes no invitation", async () => {
    const mailless = await identityKit({ database: kit.database });
    try {
      const owner = await person(kit);
      const org = await createOrg(owner);
      const res = await request(mailless.app)
        .post("/api/auth/organization/invite-member")
        .set("cookie", owner.cookie)
        .send({ organizationId: org.id, email: fresh("nomail"), role: "member" });
      expect([res.status, res.body.code]).toEqual([503, "mail_unavailable"]);
      expect(await kit.db.prisma.invitation.count({ where: { organizationId: org.id } })).toBe(0);
    } finally {
      await mailless.close();
    }
  });
});
