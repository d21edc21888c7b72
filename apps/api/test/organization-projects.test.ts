import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApi, type TestApi } from "./helpers.js";
import { call, expectCall, type Identity, identityOf, type User } from "./org-kit.js";

// Projects of an organization: members read them, admins manage them, owners delete them, anyone
// else is told they do not exist. Memberships are identity's rows, written here as identity would.
let t: TestApi;
let id: Identity;
beforeAll(async () => {
  t = await startTestApi({ env: { MAX_PROJECTS_PER_ORGANIZATION: "3" } });
  id = identityOf(t);
});
afterAll(async () => {
  await id?.close();
  await t?.close();
});

interface Org {
  org: string;
  owner: User;
  admin: User;
  member: User;
  outsider: User;
}

async function organization(): Promise<Org> {
  const [owner, admin, member, outsider] = [await t.user(), await t.user(), await t.user(), await t.user()];
  const org = await id.organization([
    [owner, "owner"],
    [admin, "admin"],
    [member, "member"],
  ]);
  return { org, owner, admin, member, outsider };
}

type Project = { id: string; name: string; organizationId: string | null };

describe("an organization's projects", () => {
  it("members create and list them; a non-member is told the organization does not exist", async () => {
    const o = await organization();
    const made = await expectCall<Project>(t, o.member, "POST", "/api/projects", 201, { name: "Shared", organizationId: o.org });
    expect(made).toMatchObject({ name: "Shared", organizationId: o.org, description: null });
    for (const u of [o.owner, o.admin, o.member]) {
      const list = await expectCall<Project[]>(t, u, "GET", `/api/projects?organizationId=${o.org}`, 200);
      expect(list.map((p) => p.id)).toEqual([made.id]);
      expect((await expectCall<Project>(t, u, "GET", `/api/projects/${made.id}`, 200)).organizationId).toBe(o.org);
    }
    const refused = await call(t, o.outsider, "GET", `/api/projects?organizationId=${o.org}`);
    expect([refused.status, refused.code]).toEqual([404, "not_found"]);
    expect((await call(t, o.outsider, "POST", "/api/projects", { name: "x", organizationId: o.org })).status).toBe(404);
    expect((await call(t, o.outsider, "GET", `/api/projects?organizationId=no-such-org`)).status).toBe(404);
    expect((await call(t, o.outsider, "GET", `/api/projects/${made.id}`)).status).toBe(404);
    // Text no id has is bad input, not a lookup.
    for (const path of ["/api/projects?organizationId=a%00b", "/api/tasks?projectId=%1B"]) {
      const bad = await call(t, o.member, "GET", path);
      expect([path, bad.status, bad.code]).toEqual([path, 400, "validation_failed"]);
    }
    // The creator's own list holds only projects outside organizations.
    expect(await expectCall<Project[]>(t, o.member, "GET", "/api/projects", 200)).toEqual([]);
  });

  it("admins and owners rename it, a member gets 403; only owners delete it", async () => {
    const o = await organization();
    const p = await expectCall(t, o.member, "POST", "/api/projects", 201, { name: "P", organizationId: o.org });
    const rename = await call(t, o.member, "PATCH", `/api/projects/${p.id}`, { name: "by member" });
    expect([rename.status, rename.code]).toEqual([403, "forbidden"]);
    expect((await call(t, o.outsider, "PATCH", `/api/projects/${p.id}`, { name: "x" })).status).toBe(404);
    expect((await expectCall<Project>(t, o.admin, "PATCH", `/api/projects/${p.id}`, 200, { name: "by admin" })).name).toBe("by admin");
    expect((await expectCall<Project>(t, o.owner, "PATCH", `/api/projects/${p.id}`, 200, { description: "d" })).name).toBe("by admin");
    for (const u of [o.member, o.admin]) {
      const del = await call(t, u, "DELETE", `/api/projects/${p.id}`);
      expect([del.status, del.code]).toEqual([403, "forbidden"]);
    }
    expect((await call(t, o.outsider, "DELETE", `/api/projects/${p.id}`)).status).toBe(404);
    expect((await call(t, o.owner, "DELETE", `/api/projects/${p.id}`)).status).toBe(204);
    expect((await call(t, o.owner, "GET", `/api/projects/${p.id}`)).status).toBe(404);
  });

  it("a role list (better-auth's comma form) counts by its strongest role; an unknown role as a member's", async () => {
    const o = await organization();
    const [both, custom] = [await t.user(), await t.user()];
    await id.addMember(o.org, both, "member, admin");
    await id.addMember(o.org, custom, "billing");
    const p = await expectCall(t, custom, "POST", "/api/projects", 201, { name: "P", organizationId: o.org });
    expect((await call(t, custom, "PATCH", `/api/projects/${p.id}`, { name: "x" })).status).toBe(403);
    expect((await call(t, both, "PATCH", `/api/projects/${p.id}`, { name: "y" })).status).toBe(200);
  });

  it("moves: an admin into another organization they belong to; a personal project by its owner", async () => {
    const o = await organization();
    const other = await id.organization([[o.admin, "member"]]);
    const p = await expectCall(t, o.member, "POST", "/api/projects", 201, { name: "P", organizationId: o.org });
    expect((await call(t, o.member, "PATCH", `/api/projects/${p.id}`, { organizationId: other })).status).toBe(403);
    expect((await call(t, o.owner, "PATCH", `/api/projects/${p.id}`, { organizationId: other })).status).toBe(404);
    const moved = await expectCall<Project>(t, o.admin, "PATCH", `/api/projects/${p.id}`, 200, { organizationId: other });
    expect(moved.organizationId).toBe(other);
    expect((await call(t, o.member, "GET", `/api/projects/${p.id}`)).status).toBe(404);

    const mine = await expectCall(t, o.outsider, "POST", "/api/projects", 201, { name: "mine" });
    expect((await call(t, o.outsider, "PATCH", `/api/projects/${mine.id}`, { organizationId: o.org })).status).toBe(404);
    const own = await expectCall(t, o.member, "POST", "/api/projects", 201, { name: "own" });
    const task = await expectCall(t, o.member, "POST", "/api/tasks", 201, { title: "t", projectId: own.id });
    expect((await call(t, o.admin, "GET", `/api/tasks/${task.id}`)).status).toBe(404);
    await expectCall(t, o.member, "PATCH", `/api/projects/${own.id}`, 200, { organizationId: o.org });
    // What the project holds moved with it: the other members see it now.
    expect((await expectCall<{ title: string }>(t, o.admin, "GET", `/api/tasks/${task.id}`, 200)).title).toBe("t");
    expect((await call(t, o.member, "PATCH", `/api/projects/${own.id}`, { organizationId: null })).status).toBe(400);
  });

  it("holds at most MAX_PROJECTS_PER_ORGANIZATION projects (409), also against concurrent creations and moves", async () => {
    const o = await organization();
    const creations = await Promise.all(
      Array.from({ length: 5 }, (_, i) => call(t, o.member, "POST", "/api/projects", { name: `p${i}`, organizationId: o.org })),
    );
    expect(creations.map((c) => c.status).sort()).toEqual([201, 201, 201, 409, 409]);
    expect(creations.find((c) => c.status === 409)?.code).toBe("conflict");
    const own = await expectCall(t, o.admin, "POST", "/api/projects", 201, { name: "own" });
    expect((await call(t, o.admin, "PATCH", `/api/projects/${own.id}`, { organizationId: o.org })).status).toBe(409);
    expect(await t.db.prisma.project.count({ where: { organizationId: o.org } })).toBe(3);
    // Personal projects have no such cap.
    for (let i = 0; i < 4; i += 1) await expectCall(t, o.member, "POST", "/api/projects", 201, { name: `mine${i}` });
  });
});

describe("one read of the membership per request", () => {
  it("the organization check is one read of organization_membership, and authentication adds none", async () => {
    const o = await organization();
    const p = await expectCall(t, o.member, "POST", "/api/projects", 201, { name: "P", organizationId: o.org });
    const task = await expectCall(t, o.member, "POST", "/api/tasks", 201, { title: "t", projectId: p.id });
    await call(t, o.admin, "GET", "/api/me"); // warm the key set
    const membership = (sql: string[]) => sql.filter((s) => s.includes("organization_membership"));

    const list = await t.statementsOf(async () => expectCall(t, o.admin, "GET", `/api/projects?organizationId=${o.org}`, 200));
    expect(membership(list)).toHaveLength(1);
    expect(list).toHaveLength(2); // the membership, then the page
    const read = await t.statementsOf(async () => expectCall(t, o.admin, "GET", `/api/tasks/${task.id}`, 200));
    expect(membership(read)).toHaveLength(1);
    expect(read).toHaveLength(2); // the task with its project's organization, then the membership
    const me = await t.statementsOf(async () => expectCall(t, o.admin, "GET", "/api/me", 200));
    expect(me).toEqual([]);
    // A personal project's read makes no membership read at all.
    const own = await expectCall(t, o.admin, "POST", "/api/projects", 201, { name: "own" });
    const personal = await t.statementsOf(async () => expectCall(t, o.admin, "GET", `/api/projects/${own.id}`, 200));
    expect(personal).toHaveLength(1);
    expect(membership(personal)).toEqual([]);
  });

  it("a member removed at identity is refused on the next request with the same token (404)", async () => {
    const o = await organization();
    const p = await expectCall(t, o.member, "POST", "/api/projects", 201, { name: "P", organizationId: o.org });
    const task = await expectCall(t, o.member, "POST", "/api/tasks", 201, { title: "t", projectId: p.id });
    await expectCall(t, o.admin, "GET", `/api/tasks/${task.id}`, 200);
    await expectCall(t, o.admin, "GET", `/api/projects?organizationId=${o.org}`, 200);

    await id.removeMember(o.org, o.admin);
    for (const path of [
      `/api/tasks/${task.id}`,
      `/api/projects/${p.id}`,
      `/api/projects?organizationId=${o.org}`,
      `/api/tasks?projectId=${p.id}`,
    ]) {
      const refused = await call(t, o.admin, "GET", path);
      expect([path, refused.status, refused.code]).toEqual([path, 404, "not_found"]);
    }
    expect((await call(t, o.admin, "POST", `/api/tasks/${task.id}/messages`, { text: "still here?" })).status).toBe(404);
    // The author's own lists never held it: removed, they see nothing of it.
    expect(await expectCall<unknown[]>(t, o.member, "GET", "/api/tasks", 200)).toEqual([]);
    await expectCall(t, o.member, "GET", `/api/tasks/${task.id}`, 200);
  });

  it("an organization pending deletion answers 404 to its members at once", async () => {
    const o = await organization();
    const p = await expectCall(t, o.owner, "POST", "/api/projects", 201, { name: "P", organizationId: o.org });
    await t.api.organizationDeletions.close(); // the API's part never runs here: the view alone refuses
    await id.deleteOrganization(o.org, false);
    expect((await call(t, o.owner, "GET", `/api/projects/${p.id}`)).status).toBe(404);
    expect((await call(t, o.owner, "GET", `/api/projects?organizationId=${o.org}`)).status).toBe(404);
  });
});
