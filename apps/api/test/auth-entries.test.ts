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

  it("the contract row: a session ended at identity leaves the JWT valid, and business routes never ask identity", async () => {
    const u = await t.user();
    const cookie = t.stub.addSession(u);
    const calls = t.stub.calls.getSession.length;
    expect((await fetch(`${t.url}/api/tasks`, { headers: u.auth })).status).toBe(200);
    // Identity forgets the session (sign-out, expiry or a deleted session row).
    t.stub.deleteSession(cookie);
    const after = await fetch(`${t.url}/api/tasks`, json({ title: "still works" }, u.auth));
    expect(after.status).toBe(201);
    expect((await fetch(`${t.url}/api/tasks`, { headers: u.auth })).status).toBe(200);
    // No bearer request asked identity about the session.
    expect(t.stub.calls.getSession.length).toBe(calls);
    // The cookie path does notice: the MCP authorize route now refuses that cookie.
    const mcp = await fetch(`${t.url}/api/mcp-oauth/authorize?serverId=x`, { headers: { cookie }, redirect: "manual" });
    expect(mcp.status).toBe(401);
    expect(t.stub.calls.getSession.length).toBe(calls + 1);
  });
});

describe("the cookie entry (MCP authorize) asks identity like the browser would", () => {
  it("POSTs get-session with the cookie, user agent and forwarding headers", async () => {
    const u = await t.user();
    const cookie = t.stub.addSession(u);
    const res = await fetch(`${t.url}/api/mcp-oauth/authorize?serverId=none`, {
      headers: {
        cookie,
        "user-agent": "Browser/1.0",
        "x-forwarded-for": "203.0.113.7",
        "x-forwarded-proto": "https",
        "x-forwarded-host": "app.example.com",
      },
      redirect: "manual",
    });
    expect(res.status).toBe(404); // authenticated; the server id is unknown
    expect(t.stub.calls.getSession.at(-1)).toMatchObject({
      method: "POST",
      cookie,
      authorization: undefined,
      userAgent: "Browser/1.0",
      forwardedFor: "203.0.113.7, 127.0.0.1",
      forwardedProto: "https",
      forwardedHost: "app.example.com",
    });
  });

  it("answers 401, not 503, when identity says 200 with an empty or null session", async () => {
    const u = await t.user();
    const cookie = t.stub.addSession(u);
    for (const body of ["", "null", '{"session":null,"user":null}']) {
      t.stub.answerGetSession({ status: 200, body });
      try {
        const res = await fetch(`${t.url}/api/mcp-oauth/authorize?serverId=x`, { headers: { cookie }, redirect: "manual" });
        expect(res.status, body).toBe(401);
        expect(((await res.json()) as { error: { code: string } }).error.code).toBe("unauthorized");
      } finally {
        t.stub.answerGetSession(undefined);
      }
    }
    t.stub.answerGetSession({ status: 200, body: "<html>" });
    try {
      expect((await fetch(`${t.url}/api/mcp-oauth/authorize?serverId=x`, { headers: { cookie }, redirect: "manual" })).status).toBe(503);
    } finally {
      t.stub.answerGetSession(undefined);
    }
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
