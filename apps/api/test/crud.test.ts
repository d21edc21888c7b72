import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApi, type TestApi } from "./helpers.js";

let t: TestApi;
beforeAll(async () => {
  t = await startTestApi();
});
afterAll(async () => {
  await t?.close();
});

type Env<T> = { ok: boolean; data: T; error?: { code: string } };

async function call<T>(method: string, path: string, auth: Record<string, string>, body?: unknown) {
  const res = await fetch(`${t.url}${path}`, {
    method,
    headers: { ...auth, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: (text ? JSON.parse(text) : undefined) as Env<T> };
}

describe("tasks", () => {
  it("creates with only a title (201 ok(task)), lists as ok([...]), reads, updates, deletes (204)", async () => {
    const u = await t.user();
    const created = await call<{ id: string; title: string; status: string; createdAt: string }>("POST", "/api/tasks", u.auth, {
      title: "Write tests",
    });
    expect(created.status).toBe(201);
    expect(created.body.ok).toBe(true);
    expect(created.body.data).toMatchObject({ title: "Write tests", status: "pending", description: null, projectId: null });
    expect(Date.parse(created.body.data.createdAt)).not.toBeNaN();
    const id = created.body.data.id;

    const list = await call<Array<{ id: string }>>("GET", "/api/tasks", u.auth);
    expect(list.status).toBe(200);
    expect(Array.isArray(list.body.data)).toBe(true);
    expect(list.body.data.map((x) => x.id)).toEqual([id]);

    expect((await call("GET", `/api/tasks/${id}`, u.auth)).body.data).toMatchObject({ id, title: "Write tests" });
    const patched = await call<{ status: string }>("PATCH", `/api/tasks/${id}`, u.auth, { status: "running" });
    expect(patched.status).toBe(200);
    expect(patched.body.data.status).toBe("running");
    expect((await call("PATCH", `/api/tasks/${id}`, u.auth, { status: "bogus" })).status).toBe(400);

    const del = await fetch(`${t.url}/api/tasks/${id}`, { method: "DELETE", headers: u.auth });
    expect(del.status).toBe(204);
    expect(await del.text()).toBe("");
    expect((await call("GET", `/api/tasks/${id}`, u.auth)).status).toBe(404);
  });

  it("answers 404 for someone else's task on every route", async () => {
    const owner = await t.user();
    const other = await t.user();
    const { body } = await call<{ id: string }>("POST", "/api/tasks", owner.auth, { title: "mine" });
    const id = body.data.id;
    expect((await call("GET", `/api/tasks/${id}`, other.auth)).status).toBe(404);
    expect((await call("PATCH", `/api/tasks/${id}`, other.auth, { title: "x" })).status).toBe(404);
    expect((await call("DELETE", `/api/tasks/${id}`, other.auth)).status).toBe(404);
    expect((await call("GET", `/api/tasks/${id}/messages`, other.auth)).status).toBe(404);
    expect((await call("POST", `/api/tasks/${id}/messages`, other.auth, { text: "hi" })).status).toBe(404);
    expect((await call("GET", `/api/tasks/${id}/stream`, other.auth)).status).toBe(404);
    expect((await call<unknown[]>("GET", "/api/tasks", other.auth)).body.data).toEqual([]);
    expect((await call("GET", `/api/tasks/${id}`, owner.auth)).status).toBe(200);
  });

  it("paginates with ?limit and an opaque cursor in x-next-cursor (data stays an array)", async () => {
    const u = await t.user();
    const ids: string[] = [];
    for (let i = 0; i < 5; i += 1) ids.push((await call<{ id: string }>("POST", "/api/tasks", u.auth, { title: `t${i}` })).body.data.id);
    const seen: string[] = [];
    let path = "/api/tasks?limit=2";
    for (let pages = 0; pages < 5; pages += 1) {
      const page = await call<Array<{ id: string }>>("GET", path, u.auth);
      expect(page.body.data.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.data.map((x) => x.id));
      const cursor = page.headers.get("x-next-cursor");
      if (!cursor) break;
      expect(page.headers.get("link")).toContain('rel="next"');
      path = `/api/tasks?limit=2&cursor=${encodeURIComponent(cursor)}`;
    }
    expect(seen).toEqual([...ids].reverse());
    expect((await call("GET", "/api/tasks?limit=0", u.auth)).status).toBe(400);
    expect((await call("GET", "/api/tasks?limit=101", u.auth)).status).toBe(400);
    expect((await call("GET", "/api/tasks?cursor=garbage", u.auth)).status).toBe(400);
  });

  it("refuses a projectId the user does not own", async () => {
    const a = await t.user();
    const b = await t.user();
    const project = await call<{ id: string }>("POST", "/api/projects", a.auth, { name: "A's" });
    expect((await call("POST", "/api/tasks", b.auth, { title: "x", projectId: project.body.data.id })).status).toBe(404);
    expect((await call("POST", "/api/tasks", a.auth, { title: "x", projectId: project.body.data.id })).status).toBe(201);
  });
});

describe.each([
  ["/api/projects", { name: "Apollo" }, { name: "Artemis" }, "name"],
  ["/api/agents", { name: "Helper", model: "m1" }, { instructions: "be nice" }, "name"],
  ["/api/chats", { title: "Hello" }, { title: "Renamed" }, "title"],
  ["/api/mcp-servers", { name: "Files", url: "https://mcp.example.com/mcp" }, { name: "Docs" }, "name"],
] as const)("%s", (path, create, update, field) => {
  it("supports create (201), list, read, update, delete (204) and 404 for other users", async () => {
    const u = await t.user();
    const other = await t.user();
    const created = await call<Record<string, unknown> & { id: string }>("POST", path, u.auth, create);
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject(create);
    const id = created.body.data.id;
    expect((await call<Array<{ id: string }>>("GET", path, u.auth)).body.data.map((x) => x.id)).toEqual([id]);
    expect((await call<unknown[]>("GET", path, other.auth)).body.data).toEqual([]);
    expect((await call("GET", `${path}/${id}`, other.auth)).status).toBe(404);
    expect((await call("PATCH", `${path}/${id}`, other.auth, update)).status).toBe(404);
    expect((await call("DELETE", `${path}/${id}`, other.auth)).status).toBe(404);
    const patched = await call<Record<string, unknown>>("PATCH", `${path}/${id}`, u.auth, update);
    expect(patched.status).toBe(200);
    expect(patched.body.data).toMatchObject(update);
    expect((await call("PATCH", `${path}/${id}`, u.auth, {})).status).toBe(400);
    expect((await call("POST", path, u.auth, { [field]: "" })).status).toBe(400);
    expect((await call("DELETE", `${path}/${id}`, u.auth)).status).toBe(204);
    expect((await call("GET", `${path}/${id}`, u.auth)).status).toBe(404);
  });
});

describe("chat messages and MCP secrets", () => {
  it("adds and lists chat messages for the owner only", async () => {
    const u = await t.user();
    const other = await t.user();
    const chat = await call<{ id: string }>("POST", "/api/chats", u.auth, {});
    const id = chat.body.data.id;
    expect((await call("POST", `/api/chats/${id}/messages`, u.auth, { content: "hi" })).status).toBe(201);
    expect((await call("POST", `/api/chats/${id}/messages`, u.auth, { role: "assistant", content: "hello" })).status).toBe(201);
    const list = await call<Array<{ role: string; content: string }>>("GET", `/api/chats/${id}/messages`, u.auth);
    expect(list.body.data.map((m) => [m.role, m.content])).toEqual([
      ["user", "hi"],
      ["assistant", "hello"],
    ]);
    expect((await call("GET", `/api/chats/${id}/messages`, other.auth)).status).toBe(404);
    expect((await call("POST", `/api/chats/${id}/messages`, other.auth, { content: "x" })).status).toBe(404);
  });

  it("never returns an MCP client secret and stores it encrypted", async () => {
    const u = await t.user();
    const oauth = {
      authorizationUrl: "https://as.example/authorize",
      tokenUrl: "https://as.example/token",
      clientId: "c1",
      clientSecret: "s3cr3t-value",
    };
    const res = await call<{ id: string; oauth: Record<string, unknown>; connected: boolean }>("POST", "/api/mcp-servers", u.auth, {
      name: "S",
      url: "https://mcp.example/mcp",
      oauth,
    });
    expect(res.status).toBe(201);
    expect(JSON.stringify(res.body)).not.toContain("s3cr3t-value");
    expect(res.body.data.oauth).toMatchObject({ clientId: "c1", hasClientSecret: true });
    expect(res.body.data.connected).toBe(false);
    const row = await t.db.prisma.mcpServer.findUniqueOrThrow({ where: { id: res.body.data.id } });
    expect(row.clientSecret).toMatch(/^v1\./);
    expect(row.clientSecret).not.toContain("s3cr3t-value");
    expect((await call("POST", "/api/mcp-servers", u.auth, { name: "S", url: "ftp://x" })).status).toBe(400);
  });
});
