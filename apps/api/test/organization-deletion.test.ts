import { randomUUID } from "node:crypto";
import { readdir } from "node:fs/promises";
import { Writable } from "node:stream";
import { USER_DELETED_CHANNEL } from "@app/contracts";
import { createLogger } from "@app/http-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../src/app.js";
import { eventually, startTestApi, type TestApi } from "./helpers.js";
import { attach, expectCall, type Identity, identityOf, type User } from "./org-kit.js";

// The API's part of deleting an organization: identity writes an organization_deletion row and
// NOTIFYs auth_organization_deleted; the API deletes the organization's projects, everything they
// hold and their files, then sets api_done_at (apps/api/src/organizations/deletion.ts).

interface Seeded {
  org: string;
  owner: User;
  member: User;
  projects: string[];
  tasks: string[];
  files: string[];
}

/** An organization with two projects, each holding a task with an attachment, a chat with a message and an agent. */
async function seed(t: TestApi, id: Identity): Promise<Seeded> {
  const [owner, member] = [await t.user(), await t.user()];
  const org = await id.organization([
    [owner, "owner"],
    [member, "member"],
  ]);
  const s: Seeded = { org, owner, member, projects: [], tasks: [], files: [] };
  for (const name of ["one", "two"]) {
    const { id: projectId } = await expectCall(t, owner, "POST", "/api/projects", 201, { name, organizationId: org });
    const task = await expectCall(t, member, "POST", "/api/tasks", 201, { title: name, projectId });
    s.files.push(await attach(t, member, task.id, `file of ${name}`));
    const chat = await expectCall(t, member, "POST", "/api/chats", 201, { projectId });
    await expectCall(t, owner, "POST", `/api/chats/${chat.id}/messages`, 201, { content: "hi" });
    await expectCall(t, owner, "POST", "/api/agents", 201, { name, projectId });
    s.projects.push(projectId);
    s.tasks.push(task.id);
  }
  return s;
}

/** What the API still keeps of a seeded organization. */
async function leftovers(t: TestApi, s: Seeded): Promise<Record<string, number>> {
  const p = t.db.prisma;
  const users = { in: [s.owner.id, s.member.id] };
  const tasks = { in: s.tasks };
  return {
    project: await p.project.count({ where: { organizationId: s.org } }),
    task: await p.task.count({ where: { OR: [{ id: tasks }, { projectId: { in: s.projects } }] } }),
    taskMessage: await p.taskMessage.count({ where: { taskId: tasks } }),
    taskEvent: await p.taskEvent.count({ where: { taskId: tasks } }),
    upload: await p.upload.count({ where: { id: { in: s.files } } }),
    chat: await p.chat.count({ where: { userId: users } }),
    chatMessage: await p.chatMessage.count({ where: { chat: { userId: users } } }),
    agent: await p.agent.count({ where: { userId: users } }),
  };
}
const NOTHING = { project: 0, task: 0, taskMessage: 0, taskEvent: 0, upload: 0, chat: 0, chatMessage: 0, agent: 0 };

describe("organization deletion (default purge interval: only the notification and LISTEN coming up trigger it)", () => {
  let t: TestApi;
  let id: Identity;
  beforeAll(async () => {
    t = await startTestApi();
    id = identityOf(t);
  });
  afterAll(async () => {
    await id?.close();
    await t?.close();
  });

  it("deletes the organization's projects, what they hold and their files on the notification, and nothing else", async () => {
    const gone = await seed(t, id);
    const kept = await seed(t, id);
    const own = await expectCall(t, gone.member, "POST", "/api/tasks", 201, { title: "the member's own" });
    expect(Object.values(await leftovers(t, gone)).every((n) => n > 0)).toBe(true);

    await id.deleteOrganization(gone.org);
    await eventually(() => id.apiDone(gone.org));
    expect(await leftovers(t, gone)).toEqual(NOTHING);
    // The member's own task, outside the organization, stays.
    await expectCall(t, gone.member, "GET", `/api/tasks/${own.id}`, 200);
    const files = await readdir(t.config.uploadDir);
    for (const f of gone.files) expect(files).not.toContain(f);
    for (const f of kept.files) expect(files).toContain(f);
    expect(Object.values(await leftovers(t, kept)).every((n) => n > 0)).toBe(true);
    expect(t.logs.some((l) => l.includes("organization's API data deleted") && l.includes(gone.org))).toBe(true);
  });

  it("deletes rows written late (a request that passed its membership check before the deletion)", async () => {
    const s = await seed(t, id);
    await id.deleteOrganization(s.org);
    await eventually(() => id.apiDone(s.org));
    // A creation that passed its membership check just before the deletion commits after the pass.
    const late = await t.db.prisma.project.create({ data: { id: randomUUID(), userId: s.owner.id, organizationId: s.org, name: "late" } });
    const task = await t.db.prisma.task.create({ data: { id: randomUUID(), userId: s.member.id, projectId: late.id, title: "late" } });
    await t.api.organizationDeletions.run("test");
    expect(await leftovers(t, s)).toEqual(NOTHING);
    expect(await t.db.prisma.task.count({ where: { id: task.id } })).toBe(0);
  });

  it("an account deletion hands the user's organization projects to the strongest remaining member; with none left, deletes them", async () => {
    const [leaving, admin, member] = [await t.user(), await t.user(), await t.user()];
    const org = await id.organization([
      [leaving, "owner"],
      [member, "member"],
      [admin, "admin"],
    ]);
    const alone = await id.organization([[leaving, "owner"]]);
    const kept = await expectCall(t, leaving, "POST", "/api/projects", 201, { name: "kept", organizationId: org });
    const lost = await expectCall(t, leaving, "POST", "/api/projects", 201, { name: "lost", organizationId: alone });
    const theirs = await expectCall(t, member, "POST", "/api/tasks", 201, { title: "the member's", projectId: kept.id });
    await expectCall(t, leaving, "POST", `/api/tasks/${theirs.id}/messages`, 201, { text: "from the leaving user" });
    const leavingTask = await expectCall(t, leaving, "POST", "/api/tasks", 201, { title: "the leaving user's", projectId: kept.id });
    const onLeavingTask = await attach(t, member, leavingTask.id, "the member's file on the leaving user's task");
    const lostTask = await expectCall(t, leaving, "POST", "/api/tasks", 201, { title: "lost", projectId: lost.id });

    // The outbox row and NOTIFY, as identity's delete-user writes them.
    await id.db.prisma.$transaction([
      id.db.prisma.$executeRaw`INSERT INTO user_deletion (user_id) VALUES (${leaving.id})`,
      id.db.prisma.$executeRaw`SELECT pg_notify(${USER_DELETED_CHANNEL}, ${JSON.stringify({ userId: leaving.id })})`,
    ]);
    await eventually(async () => {
      const rows = await id.db.prisma.$queryRaw<Array<{ done: Date | null }>>`
        SELECT api_done_at AS done FROM user_deletion WHERE user_id = ${leaving.id}`;
      return rows[0]?.done != null;
    });
    const p = t.db.prisma;
    expect((await p.project.findUnique({ where: { id: kept.id } }))?.userId).toBe(admin.id);
    expect(await p.project.count({ where: { id: lost.id } })).toBe(0);
    expect(await p.task.count({ where: { id: { in: [leavingTask.id, lostTask.id] } } })).toBe(0);
    expect(await p.upload.count({ where: { id: onLeavingTask } })).toBe(0);
    expect(await readdir(t.config.uploadDir)).not.toContain(onLeavingTask);
    // The member's task stays in the organization, without what the leaving user wrote on it.
    const messages = await expectCall<Array<{ text: string }>>(t, member, "GET", `/api/tasks/${theirs.id}/messages`, 200);
    expect(messages).toEqual([]);
    expect((await expectCall<{ projectId: string }>(t, admin, "GET", `/api/tasks/${theirs.id}`, 200)).projectId).toBe(kept.id);
    expect(await p.taskEvent.count({ where: { userId: leaving.id } })).toBe(0);
  });

  it("works when no API ran at the moment of deletion: the next start finds the row", async () => {
    const s = await seed(t, id);
    await t.api.organizationDeletions.close(); // this API hears nothing from here on
    await id.deleteOrganization(s.org);
    expect(await id.apiDone(s.org)).toBe(false);
    const logs: string[] = [];
    const logger = createLogger({
      name: "api-restarted",
      level: "info",
      destination: new Writable({
        write(chunk, _encoding, callback) {
          logs.push(String(chunk));
          callback();
        },
      }),
    });
    const restarted = createApp({ config: t.config, db: t.db, logger });
    await restarted.start();
    try {
      await eventually(() => id.apiDone(s.org));
      expect(await leftovers(t, s)).toEqual(NOTHING);
      const files = await readdir(t.config.uploadDir);
      for (const f of s.files) expect(files).not.toContain(f);
      expect(logs.some((l) => l.includes("organization's API data deleted") && l.includes('"reason":"listening"'))).toBe(true);
    } finally {
      await restarted.shutdown("test over");
      await restarted.close();
    }
  });
});

describe("organization deletion on the purge interval", () => {
  let t: TestApi;
  let id: Identity;
  beforeAll(async () => {
    t = await startTestApi({ env: { PURGE_INTERVAL_MS: "200" } });
    id = identityOf(t);
  });
  afterAll(async () => {
    await id?.close();
    await t?.close();
  });

  it("finds a pending row no notification announced", async () => {
    const s = await seed(t, id);
    await id.deleteOrganization(s.org, false);
    await eventually(() => id.apiDone(s.org));
    expect(await leftovers(t, s)).toEqual(NOTHING);
    expect(t.logs.some((l) => l.includes("organization's API data deleted") && l.includes('"reason":"interval"'))).toBe(true);
  });
});
