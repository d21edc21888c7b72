import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApi, type TestApi } from "./helpers.js";

let t: TestApi;
beforeAll(async () => {
  t = await startTestApi({ unreachableDatabase: true });
});
afterAll(async () => {
  await t?.close();
});

describe("authentication needs no database", () => {
  it("answers GET /api/me with 200 while the database is unreachable", async () => {
    const u = await t.user({ name: "Offline", email: "off@example.com" });
    const me = await fetch(`${t.url}/api/me`, { headers: u.auth });
    expect(me.status).toBe(200);
    expect(await me.json()).toEqual({ ok: true, data: { id: u.id, email: "off@example.com", name: "Offline" } });
    expect(t.db.queryCount()).toBe(0);
  });

  it("business routes that need data answer 503 service_unavailable, and bad tokens still 401", async () => {
    const u = await t.user();
    const list = await fetch(`${t.url}/api/tasks`, { headers: u.auth });
    expect(list.status).toBe(503);
    expect(((await list.json()) as { error: { code: string } }).error.code).toBe("service_unavailable");
    expect((await fetch(`${t.url}/api/tasks`)).status).toBe(401);
  });

  it("answers 503 jwks_unavailable when no key set can be fetched", async () => {
    const other = await startTestApi({ unreachableDatabase: true });
    try {
      other.stub.failJwks(true);
      const u = await other.user();
      const res = await fetch(`${other.url}/api/me`, { headers: u.auth });
      expect(res.status).toBe(503);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe("jwks_unavailable");
    } finally {
      await other.close();
    }
  });
});
