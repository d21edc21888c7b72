import { randomUUID } from "node:crypto";
import { ORGANIZATION_DELETED_CHANNEL, ORGANIZATIONS_PER_USER } from "@app/contracts";
import { createDb } from "@app/db";
import { createLogger } from "@app/http-kit";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { runHousekeeping } from "../src/housekeeping.js";
import type { MailKit } from "./mail-kit.js";
import { createOrg, fresh, join, orgKit, person, refusal, sessionOf } from "./organization-kit.js";

// Organizations themselves on better-auth's wire, against real PostgreSQL: create with its owner
// and default team, check-slug, update, list, get-full-organization, set-active (on the session,
// shown by get-session), the cap per user, and deletion through the outbox to housekeeping.

let kit: MailKit;
beforeAll(async () => {
  ({ kit } = await orgKit());
});
afterAll(async () => {
  await kit?.close();
});

const silent = createLogger({ name: "t", level: "silent" });

describe("creating an organization", () => {
  it("makes the caller its owner with a default team, both active on the session (get-session shows them)", async () => {
    const owner = await person(kit);
    const slug = `acme-${Date.now()}`;
    expect((await owner.post("check-slug", { slug }).expect(200)).body).toEqual({ status: true });
    const res = await owner
      .post("create", { name: "Acme", slug, metadata: { plan: "pro" }, logo: "https://img.example.com/a.png" })
      .expect(200);
    expect(res.body).toMatchObject({ name: "Acme", slug, metadata: { plan: "pro" }, logo: "https://img.example.com/a.png" });
    expect(res.body.members).toEqual([expect.objectContaining({ userId: owner.id, role: "owner", organizationId: res.body.id })]);
    const teams = (await owner.get("list-teams").expect(200)).body;
    expect(teams).toEqual([expect.objectContaining({ name: "Acme", organizationId: res.body.id })]);
    expect(await sessionOf(kit, owner)).toMatchObject({ activeOrganizationId: res.body.id, activeTeamId: teams[0].id });
    expect(refusal(await owner.post("check-slug", { slug }))).toEqual([400, "Organization slug already taken"]);
    expect(refusal(await owner.post("create", { name: "Other", slug }))).toEqual([400, "Organization already exists"]);
    // keepCurrentActiveOrganization leaves the session where it was.
    const second = await owner.post("create", { name: "Second", slug: `${slug}-2`, keepCurrentActiveOrganization: true }).expect(200);
    expect((await sessionOf(kit, owner)).activeOrganizationId).toBe(res.body.id);
    expect((await owner.get("list").expect(200)).body.map((o: { id: string }) => o.id)).toEqual([res.body.id, second.body.id]);
  });

  it("refuses bad input with 400 and a signed-out caller with 401", async () => {
    const owner = await person(kit, { verified: false });
    expect((await owner.post("create", { name: "", slug: "ok" })).status).toBe(400);
    expect((await owner.post("create", { name: "Bad", slug: "Not A Slug!" })).body.code).toBe("validation_failed");
    expect((await owner.post("create", { name: "Big", slug: "big", metadata: { blob: "x".repeat(5_000) } })).status).toBe(400);
    const res = await request(kit.app).get("/api/auth/organization/list");
    expect([res.status, res.body.code]).toEqual([401, "unauthorized"]);
  });

  it(`stops a user at ${ORGANIZATIONS_PER_USER} organizations with a clear 403`, async () => {
    const owner = await person(kit, { verified: false });
    for (let i = 0; i < ORGANIZATIONS_PER_USER; i += 1) await createOrg(owner, `Org ${i}`);
    const res = await owner.post("create", { name: "One too many", slug: fresh("many").replace(/@.*/, "") });
    expect(refusal(res)).toEqual([403, "You have reached the maximum number of organizations"]);
  });
});

describe("reading, updating and switching", () => {
  it("updates (owners and admins), answers the full organization, and sets the active one by id or slug", async () => {
    const owner = await person(kit);
    const member = await person(kit);
    const org = await createOrg(owner);
    await join(kit, owner, org.id, member);
    const updated = await owner.post("update", { organizationId: org.id, data: { name: "Renamed", metadata: { a: 1 } } }).expect(200);
    expect(updated.body).toMatchObject({ id: org.id, name: "Renamed", metadata: { a: 1 } });
    expect(refusal(await member.post("update", { organizationId: org.id, data: { name: "Mine" } }))).toEqual([
      403,
      "You are not allowed to update this organization",
    ]);
    const full = (await owner.get(`get-full-organization?organizationId=${org.id}`).expect(200)).body;
    expect(full).toMatchObject({ id: org.id, name: "Renamed", metadata: '{"a":1}' });
    expect(full.members.map((m: { user: { email: string } }) => m.user.email).sort()).toEqual([owner.email, member.email].sort());
    expect(full.teams).toHaveLength(1);
    expect(full.invitations).toEqual([expect.objectContaining({ email: member.email, status: "accepted" })]);
    // A member who may not invite sees no invitations.
    expect((await member.get(`get-full-organization?organizationSlug=${org.slug}`).expect(200)).body.invitations).toEqual([]);

    expect((await member.post("set-active", { organizationId: null }).expect(200)).body).toBeNull();
    expect(await sessionOf(kit, member)).toMatchObject({ activeOrganizationId: null, activeTeamId: null });
    expect((await member.get("get-full-organization").expect(200)).body).toBeNull();
    expect((await member.post("set-active", { organizationSlug: org.slug }).expect(200)).body.id).toBe(org.id);
    expect((await sessionOf(kit, member)).activeOrganizationId).toBe(org.id);

    const stranger = await person(kit, { verified: false });
    expect(refusal(await stranger.post("set-active", { organizationId: org.id }))).toEqual([
      403,
      "User is not a member of the organization",
    ]);
    expect(refusal(await stranger.get(`get-full-organization?organizationId=${org.id}`))).toEqual([
      403,
      "User is not a member of the organization",
    ]);
    expect(refusal(await stranger.get(`get-full-organization?organizationId=${randomUUID()}`))).toEqual([400, "Organization not found"]);
  });
});

describe("deleting an organization", () => {
  it("writes the outbox row and NOTIFYs the API in one transaction; the organization is gone at once; housekeeping removes it after the API", async () => {
    const owner = await person(kit);
    const admin = await person(kit);
    const org = await createOrg(owner);
    await join(kit, owner, org.id, admin, "admin");
    await admin.post("set-active", { organizationId: org.id }).expect(200);

    // The API's role, as the API listens and works the outbox off.
    const apiDb = createDb(kit.database.apiUrl, { max: 2 });
    const listener = await apiDb.pool.connect();
    const notes: string[] = [];
    listener.on("notification", (n) => notes.push(n.payload ?? ""));
    await listener.query(`LISTEN ${ORGANIZATION_DELETED_CHANNEL}`);
    try {
      expect(refusal(await admin.post("delete", { organizationId: org.id }))).toEqual([
        403,
        "You are not allowed to delete this organization",
      ]);
      expect(notes).toEqual([]);
      const res = await owner.post("delete", { organizationId: org.id }).expect(200);
      expect(res.body).toMatchObject({ id: org.id, slug: org.slug });
      await vi.waitFor(() => expect(notes).toEqual([org.id]));
      const { rows } = await apiDb.pool.query(`SELECT organization_id, api_done_at FROM "organization_deletion"`);
      expect(rows).toEqual([{ organization_id: org.id, api_done_at: null }]);
      // The API's window shows no member of it any more.
      expect((await apiDb.pool.query(`SELECT * FROM "organization_membership" WHERE organization_id = $1`, [org.id])).rows).toEqual([]);

      // Gone for identity's routes too, and from every member's session.
      expect(await sessionOf(kit, admin)).toMatchObject({ activeOrganizationId: null, activeTeamId: null });
      expect((await admin.get("list").expect(200)).body).toEqual([]);
      expect(refusal(await owner.get(`get-full-organization?organizationId=${org.id}`))).toEqual([400, "Organization not found"]);
      expect(refusal(await owner.post("set-active", { organizationId: org.id }))).toEqual([
        403,
        "User is not a member of the organization",
      ]);
      expect(refusal(await owner.post("delete", { organizationId: org.id }))).toEqual([400, "User is not a member of the organization"]);
      expect(refusal(await owner.get(`list-members?organizationId=${org.id}`))).toEqual([403, "You are not a member of this organization"]);

      // Housekeeping waits for the API, then deletes the organization with its members and teams.
      expect(
        (await runHousekeeping(kit.service, { logger: silent, keyRotationMs: 0, organizations: kit.organizations }))
          .completedOrganizationDeletions,
      ).toBe(0);
      expect(await kit.db.prisma.organization.count({ where: { id: org.id } })).toBe(1);
      await apiDb.pool.query(`UPDATE "organization_deletion" SET api_done_at = now() WHERE organization_id = $1`, [org.id]);
      expect(
        (await runHousekeeping(kit.service, { logger: silent, keyRotationMs: 0, organizations: kit.organizations }))
          .completedOrganizationDeletions,
      ).toBe(1);
      expect(await kit.db.prisma.organization.count({ where: { id: org.id } })).toBe(0);
      expect(await kit.db.prisma.member.count({ where: { organizationId: org.id } })).toBe(0);
      expect(await kit.db.prisma.team.count({ where: { organizationId: org.id } })).toBe(0);
      const done = await kit.db.prisma.organizationDeletion.findUnique({ where: { organizationId: org.id } });
      expect(done?.completedAt).toBeInstanceOf(Date);
      // The slug is free again.
      expect((await owner.post("check-slug", { slug: org.slug }).expect(200)).body).toEqual({ status: true });
      expect(
        (await runHousekeeping(kit.service, { logger: silent, keyRotationMs: 0, organizations: kit.organizations }))
          .completedOrganizationDeletions,
      ).toBe(0);
    } finally {
      await listener.query(`UNLISTEN ${ORGANIZATION_DELETED_CHANNEL}`);
      listener.release();
      await apiDb.close();
    }
  });
});
