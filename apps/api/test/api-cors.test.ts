import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApi, type TestApi } from "./helpers.js";

const WEB = "http://localhost:5173";

let t: TestApi;
beforeAll(async () => {
  t = await startTestApi({ unreachableDatabase: true });
});
afterAll(async () => {
  await t?.close();
});

/** The CORS headers of one answer. */
async function corsOf(path: string, headers: Record<string, string>, method = "GET"): Promise<Record<string, string | null>> {
  const res = await fetch(`${t.url}${path}`, { method, headers });
  await res.arrayBuffer();
  return {
    origin: res.headers.get("access-control-allow-origin"),
    expose: res.headers.get("access-control-expose-headers"),
    methods: res.headers.get("access-control-allow-methods"),
    vary: res.headers.get("vary"),
  };
}

describe("CORS on /api (entry/cors.ts)", () => {
  it("answers OPTIONS without an Origin with the route's methods in Allow, as Express's router does", async () => {
    const res = await fetch(`${t.url}/api/tasks`, { method: "OPTIONS" });
    await res.arrayBuffer();
    expect(res.status).toBe(200);
    expect(res.headers.get("allow")).toBe("GET, HEAD, POST");
    expect(res.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("answers the web origin under /api in any case of the path, preflight included, and nothing elsewhere", async () => {
    const u = await t.user();
    for (const path of ["/api/me", "/API/me", "/api", "/api?x=1"]) {
      const cors = await corsOf(path, { ...u.auth, origin: WEB });
      expect(cors.origin, path).toBe(WEB);
      expect(cors.expose, path).toContain("x-next-cursor");
    }
    const preflight = await corsOf("/api/tasks", { origin: WEB, "access-control-request-method": "POST" }, "OPTIONS");
    expect(preflight.origin).toBe(WEB);
    expect(preflight.methods).toContain("PATCH");
    for (const path of ["/healthz", "/apiary", "/other/api"]) {
      expect((await corsOf(path, { origin: WEB })).origin, path).toBeNull();
    }
  });

  it("adds no CORS header to a request without Origin, or from another origin", async () => {
    const u = await t.user();
    expect(await corsOf("/api/me", u.auth)).toEqual({ origin: null, expose: null, methods: null, vary: null });
    const other = await corsOf("/api/me", { ...u.auth, origin: "https://evil.example" });
    expect([other.origin, other.expose]).toEqual([null, null]);
  });
});
