import { once } from "node:events";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { eventually, readSse, startTestApi, type TestApi } from "./helpers.js";
import { attach, call, expectCall, type Identity, identityOf, type User } from "./org-kit.js";

// What an organization's project holds (tasks and their messages, events and attachments, chats
// and their messages, agents) is every member's to read and write, whatever their role, and
// nobody else's: a non-member gets 404 on every route.
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

interface Org {
  org: string;
  project: string;
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
  const { id: project } = await expectCall(t, owner, "POST", "/api/projects", 201, { name: "P", organizationId: org });
  return { org, project, owner, admin, member, outsider };
}

describe("tasks, chats, agents and attachments in an organization's project", () => {
  it("every member reads and writes a task, its messages and its attachments; a non-member gets 404 everywhere", async () => {
    const o = await organization();
    const task = await expectCall(t, o.member, "POST", "/api/tasks", 201, { title: "shared", projectId: o.project });
    const file = await attach(t, o.member, task.id, "bytes of the member");
    for (const [i, u] of [o.owner, o.admin, o.member].entries()) {
      await expectCall(t, u, "GET", `/api/tasks/${task.id}`, 200);
      await expectCall(t, u, "PATCH", `/api/tasks/${task.id}`, 200, { status: "running", title: `by ${i}` });
      await expectCall(t, u, "POST", `/api/tasks/${task.id}/messages`, 201, { text: `hello from ${i}` });
      expect((await expectCall<unknown[]>(t, u, "GET", `/api/tasks/${task.id}/messages`, 200)).length).toBe(2 + i);
      expect((await expectCall<unknown[]>(t, u, "GET", `/api/tasks?projectId=${o.project}`, 200)).length).toBe(1);
      const download = await fetch(`${t.url}/api/uploads/${file}`, { headers: u.auth });
      expect([download.status, await download.text()]).toEqual([200, "bytes of the member"]);
    }
    await attach(t, o.admin, task.id, "bytes of the admin");

    const routes: Array<[string, string, unknown?]> = [
      ["GET", `/api/tasks/${task.id}`],
      ["PATCH", `/api/tasks/${task.id}`, { title: "x" }],
      ["GET", `/api/tasks/${task.id}/messages`],
      ["POST", `/api/tasks/${task.id}/messages`, { text: "x" }],
      ["GET", `/api/tasks/${task.id}/stream`],
      ["GET", `/api/uploads/${file}`],
      ["GET", `/api/tasks?projectId=${o.project}`],
      ["POST", "/api/tasks", { title: "x", projectId: o.project }],
      ["DELETE", `/api/tasks/${task.id}`],
    ];
    for (const [method, path, body] of routes) {
      const answer = await call(t, o.outsider, method, path, body);
      expect([method, path, answer.status, answer.code]).toEqual([method, path, 404, "not_found"]);
    }
    const form = new FormData();
    form.append("text", "x");
    form.append("files", new Blob(["y"], { type: "text/plain" }), "y.txt");
    const multipart = await fetch(`${t.url}/api/tasks/${task.id}/messages`, { method: "POST", headers: o.outsider.auth, body: form });
    expect(multipart.status).toBe(404);

    // A member deletes it: its attachments go along (rows and files), none becomes one member's upload.
    expect((await call(t, o.admin, "DELETE", `/api/tasks/${task.id}`)).status).toBe(204);
    expect(await t.db.prisma.upload.count({ where: { userId: { in: [o.member.id, o.admin.id] } } })).toBe(0);
    expect((await fetch(`${t.url}/api/uploads/${file}`, { headers: o.member.auth })).status).toBe(404);
    expect(await expectCall<unknown[]>(t, o.member, "GET", "/api/uploads", 200)).toEqual([]);
  });

  it("chats and their messages, agents: members only", async () => {
    const o = await organization();
    const agent = await expectCall(t, o.admin, "POST", "/api/agents", 201, { name: "helper", projectId: o.project });
    const chat = await expectCall(t, o.member, "POST", "/api/chats", 201, { title: "c", projectId: o.project, agentId: agent.id });
    for (const u of [o.owner, o.admin, o.member]) {
      await expectCall(t, u, "GET", `/api/chats/${chat.id}`, 200);
      await expectCall(t, u, "PATCH", `/api/chats/${chat.id}`, 200, { title: "renamed" });
      await expectCall(t, u, "POST", `/api/chats/${chat.id}/messages`, 201, { content: "hi" });
      await expectCall(t, u, "GET", `/api/chats/${chat.id}/messages`, 200);
      await expectCall(t, u, "GET", `/api/agents/${agent.id}`, 200);
      expect((await expectCall<unknown[]>(t, u, "GET", `/api/chats?projectId=${o.project}`, 200)).length).toBe(1);
      expect((await expectCall<unknown[]>(t, u, "GET", `/api/agents?projectId=${o.project}`, 200)).length).toBe(1);
    }
    for (const [method, path, body] of [
      ["GET", `/api/chats/${chat.id}`],
      ["PATCH", `/api/chats/${chat.id}`, { title: "x" }],
      ["DELETE", `/api/chats/${chat.id}`],
      ["GET", `/api/chats/${chat.id}/messages`],
      ["POST", `/api/chats/${chat.id}/messages`, { content: "x" }],
      ["GET", `/api/agents/${agent.id}`],
      ["PATCH", `/api/agents/${agent.id}`, { name: "x" }],
      ["DELETE", `/api/agents/${agent.id}`],
      ["GET", `/api/chats?projectId=${o.project}`],
      ["POST", "/api/chats", { title: "mine", agentId: agent.id }],
    ] as Array<[string, string, unknown?]>) {
      const answer = await call(t, o.outsider, method, path, body);
      expect([method, path, answer.status]).toEqual([method, path, 404]);
    }
    // The outsider's own chat may not point at the organization's agent either.
    const mine = await expectCall(t, o.outsider, "POST", "/api/chats", 201, { title: "mine" });
    expect((await call(t, o.outsider, "PATCH", `/api/chats/${mine.id}`, { agentId: agent.id })).status).toBe(404);
    await expectCall(t, o.member, "DELETE", `/api/chats/${chat.id}`, 204);
    await expectCall(t, o.member, "DELETE", `/api/agents/${agent.id}`, 204);
  });

  it("moves content only where the mover may write; out of the organization only by its author", async () => {
    const o = await organization();
    const mine = await expectCall(t, o.member, "POST", "/api/tasks", 201, { title: "mine" });
    await expectCall(t, o.member, "PATCH", `/api/tasks/${mine.id}`, 200, { projectId: o.project });
    await expectCall(t, o.owner, "GET", `/api/tasks/${mine.id}`, 200);
    // Another member may not take it out into the author's space, nor into their own project.
    const ownerProject = await expectCall(t, o.owner, "POST", "/api/projects", 201, { name: "owner's own" });
    for (const projectId of [null, ownerProject.id]) {
      const refused = await call(t, o.owner, "PATCH", `/api/tasks/${mine.id}`, { projectId });
      expect([refused.status, refused.code]).toEqual([403, "forbidden"]);
    }
    // A non-member's project is not found, and a non-member cannot pull a task into theirs.
    const outsiderProject = await expectCall(t, o.outsider, "POST", "/api/projects", 201, { name: "outside" });
    expect((await call(t, o.member, "PATCH", `/api/tasks/${mine.id}`, { projectId: outsiderProject.id })).status).toBe(404);
    expect((await call(t, o.outsider, "PATCH", `/api/tasks/${mine.id}`, { projectId: outsiderProject.id })).status).toBe(404);
    // The author takes it back.
    await expectCall(t, o.member, "PATCH", `/api/tasks/${mine.id}`, 200, { projectId: null });
    expect((await call(t, o.owner, "GET", `/api/tasks/${mine.id}`)).status).toBe(404);
  });

  it("an owner's deletion of the project takes everything in it along, and its streams hear task.deleted", async () => {
    const o = await organization();
    const task = await expectCall(t, o.member, "POST", "/api/tasks", 201, { title: "t", projectId: o.project });
    const file = await attach(t, o.member, task.id, "gone with the project");
    await expectCall(t, o.member, "POST", "/api/chats", 201, { projectId: o.project });
    await expectCall(t, o.member, "POST", "/api/agents", 201, { name: "a", projectId: o.project });
    const stream = await fetch(`${t.url}/api/tasks/${task.id}/stream`, { headers: o.admin.auth });
    expect(stream.status).toBe(200);
    const heard = readSse(stream, (events) => events.some((e) => e.event === "task.deleted"));
    await expectCall(t, o.owner, "DELETE", `/api/projects/${o.project}`, 204);
    expect((await heard).events.map((e) => e.event)).toContain("task.deleted");
    const p = t.db.prisma;
    expect([await p.task.count({ where: { id: task.id } }), await p.upload.count({ where: { id: file } })]).toEqual([0, 0]);
    expect(await p.chat.count({ where: { userId: o.member.id } })).toBe(0);
    expect(await p.agent.count({ where: { userId: o.member.id } })).toBe(0);
  });
});

describe("events of an organization's task", () => {
  it("reach every member's SSE stream and WebSocket, whoever wrote them", async () => {
    const o = await organization();
    const task = await expectCall(t, o.owner, "POST", "/api/tasks", 201, { title: "t", projectId: o.project });
    const stream = await fetch(`${t.url}/api/tasks/${task.id}/stream`, { headers: o.member.auth });
    expect(stream.status).toBe(200);
    const ws = new WebSocket(`${t.url.replace("http", "ws")}/api/ws?token=${o.owner.token}`);
    const frames: Array<{ type: string; event?: { type: string; data: { text?: string } } }> = [];
    ws.on("message", (data) => frames.push(JSON.parse(String(data))));
    await once(ws, "open");
    ws.send(JSON.stringify({ type: "subscribe", taskId: task.id }));
    const outsider = new WebSocket(`${t.url.replace("http", "ws")}/api/ws?token=${o.outsider.token}`);
    const refused: Array<{ type: string; code?: string }> = [];
    outsider.on("message", (data) => refused.push(JSON.parse(String(data))));
    await once(outsider, "open");
    outsider.send(JSON.stringify({ type: "subscribe", taskId: task.id }));
    try {
      await eventually(() => frames.some((f) => f.type === "subscribed") && refused.some((f) => f.type === "error"));
      expect(refused.find((f) => f.type === "error")?.code).toBe("not_found");
      // Written by the admin: the member's stream and the owner's socket both get it.
      await expectCall(t, o.admin, "POST", `/api/tasks/${task.id}/messages`, 201, { text: "from the admin" });
      const { events } = await readSse(stream, (all) => all.some((e) => e.event === "message.created"));
      expect(events.find((e) => e.event === "message.created")?.data).toContain("from the admin");
      const event = await eventually(() => frames.find((f) => f.event?.type === "message.created"));
      expect(event.event?.data.text).toBe("from the admin");
    } finally {
      ws.close();
      outsider.close();
    }
  });
});
