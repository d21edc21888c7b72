import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApi, type TestApi } from "./helpers.js";
import { accessToken, connectAgent, errorText, post, structured, toolCall } from "./mcp-kit.js";
import { expectCall, type Identity, identityOf, type User } from "./org-kit.js";

let t: TestApi;
let identity: Identity;
const clients: Client[] = [];
beforeAll(async () => {
  t = await startTestApi();
  identity = identityOf(t);
});
afterAll(async () => {
  for (const c of clients) await c.close();
  await identity?.close();
  await t?.close();
});

async function agent(u: User, scope = "mcp:read mcp:write"): Promise<Client> {
  const client = await connectAgent(t, await accessToken(t, u.id, { scope }));
  clients.push(client);
  return client;
}

const call = (client: Client, name: string, args: Record<string, unknown> = {}) => client.callTool({ name, arguments: args });
type Page<T = { id: string }> = { items: T[]; nextCursor: string | null };

/** An organization with an owner and a member, its project holding a task and a chat (written through REST). */
async function organization() {
  const owner = await t.user();
  const member = await t.user();
  const outsider = await t.user();
  const org = await identity.organization([
    [owner, "owner"],
    [member, "member"],
  ]);
  const project = await expectCall(t, owner, "POST", "/api/projects", 201, { name: "Shared roadmap", organizationId: org });
  const task = await expectCall(t, owner, "POST", "/api/tasks", 201, { title: "Shared launch task", projectId: project.id });
  const chat = await expectCall(t, owner, "POST", "/api/chats", 201, { title: "Shared launch chat", projectId: project.id });
  return { owner, member, outsider, org, project, task, chat };
}

describe("organization rules, as the REST routes apply them", () => {
  it("a member reads and writes what the organization's project holds", async () => {
    const o = await organization();
    const m = await agent(o.member);
    expect(structured<Page>(await call(m, "list_projects", { organizationId: o.org })).items.map((p) => p.id)).toEqual([o.project.id]);
    expect(structured<Page>(await call(m, "list_tasks", { projectId: o.project.id })).items.map((x) => x.id)).toEqual([o.task.id]);
    expect(structured<Page>(await call(m, "list_chats", { projectId: o.project.id })).items.map((x) => x.id)).toEqual([o.chat.id]);
    expect(structured<{ task: { id: string } }>(await call(m, "get_task", { taskId: o.task.id })).task.id).toBe(o.task.id);
    structured(await call(m, "add_task_message", { taskId: o.task.id, text: "from the member's agent" }));
    const created = structured<{ id: string }>(await call(m, "create_task", { title: "Agent's", projectId: o.project.id }));
    // The owner sees both through REST.
    const listed = await expectCall<{ id: string }[]>(t, o.owner, "GET", `/api/tasks?projectId=${o.project.id}`, 200);
    expect(listed.map((x) => x.id).sort()).toEqual([o.task.id, created.id].sort());
    const messages = await expectCall<{ text: string }[]>(t, o.owner, "GET", `/api/tasks/${o.task.id}/messages`, 200);
    expect(messages.map((x) => x.text)).toEqual(["from the member's agent"]);
  });

  it("a non-member gets nothing: every tool answers not_found, and their own lists stay their own", async () => {
    const o = await organization();
    const x = await agent(o.outsider);
    expect(errorText(await call(x, "list_projects", { organizationId: o.org }))).toBe("not_found: organization not found");
    expect(errorText(await call(x, "list_tasks", { projectId: o.project.id }))).toBe("not_found: project not found");
    expect(errorText(await call(x, "list_chats", { projectId: o.project.id }))).toBe("not_found: project not found");
    expect(errorText(await call(x, "get_task", { taskId: o.task.id }))).toBe("not_found: task not found");
    expect(errorText(await call(x, "add_task_message", { taskId: o.task.id, text: "no" }))).toBe("not_found: task not found");
    expect(errorText(await call(x, "create_task", { title: "no", projectId: o.project.id }))).toBe("not_found: project not found");
    expect(errorText(await call(x, "search", { query: "shared", projectId: o.project.id }))).toBe("not_found: project not found");
    expect(errorText(await call(x, "search", { query: "shared", organizationId: o.org }))).toBe("not_found: organization not found");
    expect(structured(await call(x, "search", { query: "shared" }))).toEqual({ projects: [], tasks: [], chats: [] });
    expect(structured(await call(x, "list_tasks"))).toEqual({ items: [], nextCursor: null });
    expect(await t.db.prisma.taskMessage.count({ where: { taskId: o.task.id } })).toBe(0);
  });

  it("a member removed at identity is refused on the next call with the same token", async () => {
    const o = await organization();
    const m = await agent(o.member);
    structured(await call(m, "get_task", { taskId: o.task.id }));
    await identity.removeMember(o.org, o.member);
    expect(errorText(await call(m, "get_task", { taskId: o.task.id }))).toBe("not_found: task not found");
  });
});

describe("search", () => {
  it("finds by words in names, titles and descriptions, case-insensitively, within the lists' scopes", async () => {
    const o = await organization();
    const m = await agent(o.member);
    await expectCall(t, o.member, "POST", "/api/tasks", 201, { title: "Personal", description: "the LAUNCH checklist" });
    await expectCall(t, o.member, "POST", "/api/projects", 201, { name: "Launch site" });
    await expectCall(t, o.member, "POST", "/api/chats", 201, { title: "Nothing here" });
    type Found = { projects: { name: string }[]; tasks: { title: string }[]; chats: { title: string }[] };
    const own = structured<Found>(await call(m, "search", { query: "launch" }));
    expect(own.projects.map((p) => p.name)).toEqual(["Launch site"]);
    expect(own.tasks.map((x) => x.title)).toEqual(["Personal"]);
    expect(own.chats).toEqual([]);
    const inProject = structured<Found>(await call(m, "search", { query: "LAUNCH", projectId: o.project.id }));
    expect(inProject).toEqual({
      projects: [],
      tasks: [expect.objectContaining({ title: "Shared launch task" })],
      chats: [expect.objectContaining({ title: "Shared launch chat" })],
    });
    const inOrganization = structured<Found>(await call(m, "search", { query: "roadmap", organizationId: o.org }));
    expect(inOrganization.projects.map((p) => p.name)).toEqual(["Shared roadmap"]);
    expect(inOrganization.tasks).toEqual([]);
  });

  it("matches %, _ and \\ literally", async () => {
    const u = await t.user();
    const a = await agent(u, "mcp:read");
    await expectCall(t, u, "POST", "/api/tasks", 201, { title: "100% done" });
    await expectCall(t, u, "POST", "/api/tasks", 201, { title: "snake_case" });
    await expectCall(t, u, "POST", "/api/tasks", 201, { title: "back\\slash" });
    await expectCall(t, u, "POST", "/api/tasks", 201, { title: "plain words" });
    const titles = async (query: string) =>
      structured<{ tasks: { title: string }[] }>(await call(a, "search", { query })).tasks.map((x) => x.title);
    expect(await titles("%")).toEqual(["100% done"]);
    expect(await titles("_")).toEqual(["snake_case"]);
    expect(await titles("\\")).toEqual(["back\\slash"]);
    expect(await titles("e_c")).toEqual(["snake_case"]);
  });

  it("refuses projectId and organizationId together, and a query with control characters", async () => {
    const u = await t.user();
    const a = await agent(u, "mcp:read");
    expect(
      JSON.stringify(await call(a, "search", { query: "x", projectId: "p", organizationId: "o" }).catch((e: unknown) => String(e))),
    ).toMatch(/not both/);
    expect(JSON.stringify(await call(a, "search", { query: "a\u0007b" }).catch((e: unknown) => String(e)))).toMatch(/control characters/);
    // NUL never reaches the tool: the body reader refuses it, as on every JSON route.
    const nul = await post(t, await accessToken(t, u.id), toolCall("search", { query: "a\u0000b" }));
    expect(nul.status).toBe(400);
    expect(((await nul.json()) as { error: { code: string } }).error.code).toBe("validation_failed");
  });
});

describe("database reads", () => {
  it("authentication reads nothing: refusals, initialize and tools/list make no statement", async () => {
    const u = await t.user();
    const token = await accessToken(t, u.id);
    const initialize = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
    };
    await post(t, token, initialize); // warm the key set
    const before = t.db.queryCount();
    const sql = await t.statementsOf(async () => {
      expect((await post(t, token, initialize)).status).toBe(200);
      expect((await post(t, token, { jsonrpc: "2.0", id: 2, method: "tools/list" })).status).toBe(200);
      expect((await post(t, undefined, initialize)).status).toBe(401);
      expect((await post(t, u.token, initialize)).status).toBe(401);
      expect((await post(t, await accessToken(t, u.id, { scope: "mcp:read" }), toolCall("create_task", { title: "x" }))).status).toBe(403);
    });
    expect(sql).toEqual([]);
    expect(t.db.queryCount()).toBe(before);
  });

  it("a tool call costs what its REST route costs: a personal list is one statement", async () => {
    const u = await t.user();
    const token = await accessToken(t, u.id);
    await post(t, token, toolCall("list_projects", {}));
    const sql = await t.statementsOf(async () => expect((await post(t, token, toolCall("list_projects", {}))).status).toBe(200));
    expect(sql).toHaveLength(1);
    expect(sql[0]).toMatch(/FROM "public"."project"/);
  });
});
