import { randomUUID } from "node:crypto";
import { createDb } from "@app/db";
import { redactUrl, routeKey } from "@app/http-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type McpServerFixture, startMcpServer } from "./fixtures/mcp-server.js";
import { authorize, callback } from "./fixtures/oauth-server.js";
import { eventually, readSse, startTestApi, type TestApi } from "./helpers.js";
import { accessToken, post, toolCall } from "./mcp-kit.js";

type User = Awaited<ReturnType<TestApi["user"]>>;

let t: TestApi;
let mcp: McpServerFixture;
beforeAll(async () => {
  mcp = await startMcpServer();
  // The MCP fixture is plain http on 127.0.0.1: reachable with the development flag only.
  t = await startTestApi({ env: { MCP_ALLOW_PRIVATE_URLS: "true", UPLOAD_ALLOWED_TYPES: "text/plain" } });
});
afterAll(async () => {
  await t?.close();
  await mcp?.close();
});

/** One JSON call; the status must be `status`, and the answer's data (or raw body) is returned. */
async function call<T = { id: string }>(u: User, method: string, path: string, status: number, body?: unknown): Promise<T> {
  const res = await fetch(`${t.url}${path}`, {
    method,
    headers: { ...u.auth, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  expect(res.status, `${method} ${path}: ${text}`).toBe(status);
  if (status === 204) return undefined as T;
  const json = JSON.parse(text) as { ok?: boolean; data?: T };
  return (json.ok === true ? json.data : json) as T;
}

/** The five CRUD routes of a resource, each answered once. */
async function crud(u: User, path: string, create: Record<string, unknown>, update: Record<string, unknown>): Promise<string> {
  const { id } = await call(u, "POST", path, 201, create);
  await call(u, "GET", `${path}?limit=1`, 200);
  await call(u, "GET", `${path}/${id}`, 200);
  await call(u, "PATCH", `${path}/${id}`, 200, update);
  const spare = await call(u, "POST", path, 201, create);
  await call(u, "DELETE", `${path}/${spare.id}`, 204);
  return id;
}

function form(fields: Record<string, string>, file?: { field: string; content: string }): FormData {
  const f = new FormData();
  for (const [name, value] of Object.entries(fields)) f.append(name, value);
  if (file) f.append(file.field, new Blob([file.content], { type: "text/plain" }), "notes.txt");
  return f;
}

/** An organization owned by `u`, written as identity writes it. */
async function organization(u: User): Promise<string> {
  const admin = createDb(t.adminUrl ?? "", { max: 1 });
  try {
    const id = randomUUID();
    await admin.prisma.organization.create({ data: { id, name: "Org", slug: `org-${id}` } });
    await admin.prisma.member.create({ data: { id: randomUUID(), organizationId: id, userId: u.id, role: "owner" } });
    return id;
  } finally {
    await admin.close();
  }
}

/** The browser's MCP connection: authorize (session cookie), the fixture's approval, the callback. */
async function connect(u: User, serverId: string): Promise<void> {
  const start = await authorize(t, serverId, { cookie: t.stub.addSession(u) });
  expect(start.status, await start.clone().text()).toBe(302);
  const nonceCookie = (start.headers.getSetCookie().find((c) => c.startsWith("mcp_oauth_nonce=")) ?? "").split(";")[0];
  const approved = await fetch(start.headers.get("location") ?? "", { redirect: "manual" });
  const back = new URL(approved.headers.get("location") ?? "");
  expect((await callback(t, back.searchParams.toString(), nonceCookie)).status).toBe(302);
}

describe("route conformance", () => {
  it("answers every route of the table with a body its response schema accepts", async () => {
    const u = await t.user();
    await call(u, "GET", "/api/me", 200);
    await call(u, "GET", "/healthz", 200);
    await call(u, "GET", "/readyz", 200);
    await call(u, "GET", "/api/openapi.json", 200);

    const taskId = await crud(u, "/api/tasks", { title: "t" }, { title: "t2" });
    await call(u, "POST", `/api/tasks/${taskId}/messages`, 201, { text: "json message" });
    const multipart = await fetch(`${t.url}/api/tasks/${taskId}/messages`, {
      method: "POST",
      headers: u.auth,
      body: form({ text: "with a file" }, { field: "files", content: "attached" }),
    });
    expect(multipart.status, await multipart.clone().text()).toBe(201);
    await call(u, "GET", `/api/tasks/${taskId}/messages`, 200);
    const stream = await fetch(`${t.url}/api/tasks/${taskId}/stream?lastEventId=0`, { headers: u.auth });
    expect(stream.status).toBe(200);
    await readSse(stream, (events) => events.some((e) => e.event === "message.created"));

    await crud(u, "/api/projects", { name: "p" }, { name: "p2" });
    await crud(u, "/api/agents", { name: "a" }, { name: "a2" });
    const chatId = await crud(u, "/api/chats", { title: "c" }, { title: "c2" });
    await call(u, "POST", `/api/chats/${chatId}/messages`, 201, { role: "user", content: "hi" });
    await call(u, "GET", `/api/chats/${chatId}/messages`, 200);

    // The organization variants: a project of an organization, its list, and lists by project.
    const organizationId = await organization(u);
    const shared = await call(u, "POST", "/api/projects", 201, { name: "shared", organizationId });
    await call(u, "GET", `/api/projects?organizationId=${organizationId}`, 200);
    await call(u, "PATCH", `/api/projects/${shared.id}`, 200, { organizationId: await organization(u) });
    const sharedTask = await call(u, "POST", "/api/tasks", 201, { title: "shared", projectId: shared.id });
    await call(u, "POST", "/api/chats", 201, { projectId: shared.id });
    await call(u, "POST", "/api/agents", 201, { name: "shared", projectId: shared.id });
    for (const list of ["tasks", "chats", "agents"]) await call(u, "GET", `/api/${list}?projectId=${shared.id}`, 200);
    await call(u, "DELETE", `/api/tasks/${sharedTask.id}`, 204);
    await call(u, "DELETE", `/api/projects/${shared.id}`, 204);

    const serverId = await crud(u, "/api/mcp-servers", { name: "m", url: mcp.url }, { name: "m2" });
    await connect(u, serverId);
    await call(u, "GET", `/api/mcp-servers/${serverId}/tools`, 200);
    await call(u, "POST", `/api/mcp-servers/${serverId}/tools/echo/call`, 200, { arguments: { text: "hi" } });

    const upload = await fetch(`${t.url}/api/uploads`, {
      method: "POST",
      headers: u.auth,
      body: form({}, { field: "file", content: "x" }),
    });
    expect(upload.status, await upload.clone().text()).toBe(201);
    const { id: uploadId } = (await upload.json()) as { id: string };
    await call(u, "GET", "/api/uploads", 200);
    expect(await (await fetch(`${t.url}/api/uploads/${uploadId}`, { headers: u.auth })).text()).toBe("x");
    await call(u, "DELETE", `/api/uploads/${uploadId}`, 204);

    const generated = await fetch(`${t.url}/api/generate/stream`, {
      method: "POST",
      headers: { ...u.auth, "content-type": "application/json" },
      body: JSON.stringify({ prompt: "hello" }),
    });
    expect(generated.status).toBe(200);
    await readSse(generated, (events) => events.some((e) => e.event === "done"));

    // The MCP server: its metadata, a message, and the two methods a stateless server refuses (405).
    await call(u, "GET", "/.well-known/oauth-protected-resource/api/mcp", 200);
    const mcpAuth = { authorization: `Bearer ${await accessToken(t, u.id)}` };
    const listed = await post(t, await accessToken(t, u.id), toolCall("list_tasks", {}));
    expect(listed.status, await listed.clone().text()).toBe(200);
    for (const method of ["GET", "DELETE"]) {
      const refused = await fetch(`${t.url}/api/mcp`, { method, headers: mcpAuth });
      expect([refused.status, refused.headers.get("allow")]).toEqual([405, "POST"]);
    }

    const admin = await t.user();
    await t.db.prisma.userRole.create({ data: { userId: admin.id, role: "admin" } });
    await call(admin, "GET", "/api/admin/users", 200);
    await call(admin, "PUT", `/api/admin/users/${u.id}/roles`, 200, { roles: [] });

    // Streams count once their handler has finished, which may follow the last byte read.
    const coverage = await eventually(() => {
      const all = t.api.routes.coverage();
      return all.every((route) => route.answered > 0) ? all : undefined;
    }).catch(() => t.api.routes.coverage());
    expect(coverage.filter((route) => route.answered === 0).map((route) => route.key)).toEqual([]);
    expect(coverage.filter((route) => route.nonConforming.length > 0)).toEqual([]);
    expect(coverage.length).toBe(t.api.routes.routes.length);
  });

  it("spends the OAuth nonce in its own guard, so a callback refused for its query still clears the cookie", async () => {
    const res = await callback(t, "code=c", "mcp_oauth_nonce=n");
    expect(res.status).toBe(400);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.getSetCookie()).toContain("mcp_oauth_nonce=; Max-Age=0; Path=/api/mcp-oauth; HttpOnly; SameSite=Lax");
  });

  it("keeps every secret path parameter and query value of the table out of the request log", () => {
    const SECRET = /token|secret|code|key|password|state/i;
    // No API path carries a secret today: a route that adds one must be redacted (packages/http-kit/src/redact-url.ts).
    const secretPaths = t.api.routes.routes.filter((route) => (route.path.match(/:\w+/g) ?? []).some((param) => SECRET.test(param)));
    expect(secretPaths.map(routeKey)).toEqual([]);
    for (const route of secretPaths) expect(redactUrl(route.path.replace(/:\w+/g, "s3cr3t-value"))).not.toContain("s3cr3t-value");
    // Query parameters with a secret's name: the MCP OAuth callback's code and state.
    const secretQueries = t.api.routes.routes.flatMap((route) => {
      const shape = (route.query as { shape?: Record<string, unknown> } | undefined)?.shape ?? {};
      return Object.keys(shape)
        .filter((name) => SECRET.test(name))
        .map((name) => `${route.path}?${name}=s3cr3t-value`);
    });
    expect(secretQueries.sort()).toEqual(["/api/mcp-oauth/callback?code=s3cr3t-value", "/api/mcp-oauth/callback?state=s3cr3t-value"]);
    for (const url of secretQueries) expect(redactUrl(url), url).not.toContain("s3cr3t-value");
  });
});
