import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readSse, startTestApi, type TestApi } from "./helpers.js";

let t: TestApi;
beforeAll(async () => {
  t = await startTestApi({ env: { SSE_HEARTBEAT_MS: "50" } });
});
afterAll(async () => {
  await t?.close();
});

const json = (body: unknown, headers: Record<string, string> = {}) => ({
  method: "POST",
  headers: { "content-type": "application/json", ...headers },
  body: JSON.stringify(body),
});

describe("zero database queries for authentication", () => {
  it("GET /api/me makes no query at all, and a business list makes only its own", async () => {
    const u = await t.user({ name: "Ann", email: "ann@example.com" });
    await fetch(`${t.url}/api/me`, { headers: u.auth }); // warm the key set
    const before = t.db.queryCount();
    const me = await fetch(`${t.url}/api/me`, { headers: u.auth });
    expect(me.status).toBe(200);
    expect(await me.json()).toEqual({ ok: true, data: { id: u.id, email: "ann@example.com", name: "Ann" } });
    expect(t.db.queryCount() - before).toBe(0);

    const fresh = await t.user(); // a token never seen: full signature verification
    const beforeList = t.db.queryCount();
    const list = await fetch(`${t.url}/api/tasks`, { headers: fresh.auth });
    expect(list.status).toBe(200);
    expect(await list.json()).toEqual({ ok: true, data: [] });
    expect(t.db.queryCount() - beforeList).toBe(1); // the task list itself; authentication added none
  });

  it("the contract row: deleting the session row leaves the JWT valid", async () => {
    const u = await t.user();
    const cookie = t.stub.addSession(u);
    await t.db.prisma.session.create({
      data: { id: "sess-1", userId: u.id, secretHash: new Uint8Array(32), expiresAt: new Date(Date.now() + 86_400_000) },
    });
    expect((await fetch(`${t.url}/api/tasks`, { headers: u.auth })).status).toBe(200);
    await t.db.prisma.session.delete({ where: { id: "sess-1" } });
    t.stub.deleteSession(cookie);
    expect(await t.db.prisma.session.count({ where: { userId: u.id } })).toBe(0);
    const after = await fetch(`${t.url}/api/tasks`, json({ title: "still works" }, u.auth));
    expect(after.status).toBe(201);
    // The cookie path does notice: the MCP authorize route now refuses that cookie.
    const mcp = await fetch(`${t.url}/api/mcp-oauth/authorize?serverId=x`, { headers: { cookie }, redirect: "manual" });
    expect(mcp.status).toBe(401);
  });
});

describe("bearer only: the cookie is never read on business routes", () => {
  it("a valid session cookie without a bearer answers 401 missing_token on every entry", async () => {
    const u = await t.user();
    const cookie = t.stub.addSession(u);
    const calls = t.stub.calls.getSession.length;
    const list = await fetch(`${t.url}/api/tasks`, { headers: { cookie } });
    expect(list.status).toBe(401);
    expect(await list.json()).toEqual({ ok: false, error: { code: "missing_token", message: expect.any(String) } });
    expect((await fetch(`${t.url}/api/tasks`, json({ title: "x" }, { cookie }))).status).toBe(401);
    expect((await fetch(`${t.url}/api/uploads`, { method: "POST", headers: { cookie } })).status).toBe(401);
    expect((await fetch(`${t.url}/api/generate/stream`, json({ prompt: "x" }, { cookie }))).status).toBe(401);
    expect(t.stub.calls.getSession.length).toBe(calls); // identity was never asked
  });

  it("refuses bad tokens with the verifier's code", async () => {
    const u = await t.user();
    const cases: Array<[Record<string, string>, string]> = [
      [{}, "missing_token"],
      [{ authorization: "Basic abc" }, "malformed_token"],
      [{ authorization: "Bearer not.a.jwt" }, "invalid_signature"],
      [{ authorization: `Bearer ${await t.stub.mint(u, { foreignKey: true })}` }, "unknown_key"],
      [{ authorization: `Bearer ${await t.stub.mint(u, { issuer: "https://evil.example" })}` }, "invalid_claims"],
      [{ authorization: `Bearer ${await t.stub.mint(u, { iat: 1_000_000, exp: 1_000_100 })}` }, "token_expired"],
    ];
    for (const [headers, code] of cases) {
      const res = await fetch(`${t.url}/api/me`, { headers });
      expect(res.status, code).toBe(401);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe(code);
    }
  });

  it("validates bodies with the contracts schemas before touching data", async () => {
    const u = await t.user();
    const res = await fetch(`${t.url}/api/tasks`, json({ title: "" }, u.auth));
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { code: string; issues: Array<{ path: string }> } };
    expect(body.error.code).toBe("validation_failed");
    expect(body.error.issues[0]?.path).toBe("title");
    const unknownField = await fetch(`${t.url}/api/tasks`, json({ title: "a", role: "admin" }, u.auth));
    expect(unknownField.status).toBe(400);
    const form = await fetch(`${t.url}/api/tasks`, {
      method: "POST",
      headers: { ...u.auth, "content-type": "text/plain" },
      body: "title=a",
    });
    expect(form.status).toBe(415);
  });
});

describe("request context: the logger tags userId on the JSON and the streaming path", () => {
  it("logs userId for a JSON route and for an SSE route", async () => {
    const u = await t.user();
    const task = (await (await fetch(`${t.url}/api/tasks`, json({ title: "log me" }, u.auth))).json()) as { data: { id: string } };
    const stream = await fetch(`${t.url}/api/tasks/${task.data.id}/stream`, { headers: u.auth });
    expect(stream.status).toBe(200);
    await readSse(stream, (_e) => false, 200);
    type Line = { userId?: string; req?: { url?: string; method?: string } };
    const parsed = () => t.logs.map((l) => JSON.parse(l) as Line);
    const streamUrl = `/api/tasks/${task.data.id}/stream`;
    await expect.poll(() => parsed().filter((l) => l.req?.url === streamUrl), { timeout: 3_000 }).toHaveLength(1);
    const jsonLine = parsed().find((l) => l.req?.url === "/api/tasks" && l.req.method === "POST" && l.userId === u.id);
    const streamLine = parsed().find((l) => l.req?.url === streamUrl);
    expect(jsonLine).toBeDefined();
    expect(streamLine?.userId).toBe(u.id);
    expect(t.logs.join("")).not.toContain(u.token);
  });
});

describe("CORS", () => {
  it("exposes the pagination headers and set-auth-jwt to the web origin", async () => {
    const u = await t.user();
    const res = await fetch(`${t.url}/api/tasks`, { headers: { ...u.auth, origin: "http://localhost:5173" } });
    expect(res.headers.get("access-control-allow-origin")).toBe("http://localhost:5173");
    const exposed = res.headers.get("access-control-expose-headers") ?? "";
    expect(exposed).toContain("set-auth-jwt");
    expect(exposed).toContain("x-next-cursor");
  });
});
