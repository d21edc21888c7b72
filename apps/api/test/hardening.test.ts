import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OAUTH_STATE_TTL_MS } from "../src/mcp/oauth.js";
import { eventually, startTestApi, type TestApi } from "./helpers.js";
import { rawRequest } from "./raw-http.js";

let t: TestApi;
// The API's clock is real time (t.user() mints tokens at real time, and the verifier allows 5 s
// of skew), moved ahead by a test.
let ahead = 0;
const clock = () => Date.now() + ahead;
beforeAll(async () => {
  t = await startTestApi({ deps: { now: clock }, env: { PURGE_INTERVAL_MS: "100" } });
});
afterAll(async () => {
  await t?.close();
});

async function stateRows(userId: string, count: number, expiresAt: Date): Promise<string[]> {
  const server = await t.db.prisma.mcpServer.create({ data: { id: randomUUID(), userId, name: "s", url: "https://mcp.example" } });
  const ids = Array.from({ length: count }, () => randomUUID());
  await t.db.prisma.mcpOAuthState.createMany({
    data: ids.map((id) => ({ id, userId, serverId: server.id, codeVerifier: "sealed", expiresAt })),
  });
  return ids;
}

describe("expired OAuth states are purged", () => {
  it("purgeExpired deletes exactly the expired rows (by the API's clock)", async () => {
    const u = await t.user();
    const at = clock();
    const past = await stateRows(u.id, 3, new Date(at - 1));
    const now = await stateRows(u.id, 1, new Date(at));
    const live = await stateRows(u.id, 2, new Date(at + OAUTH_STATE_TTL_MS));
    // The scheduled purge runs too (every 100 ms here); either way exactly these rows go.
    await t.api.oauth.purgeExpired();
    const left = (await t.db.prisma.mcpOAuthState.findMany({ where: { userId: u.id } })).map((r) => r.id).sort();
    expect(left).toEqual([...live].sort());
    expect([...past, ...now].every((id) => !left.includes(id))).toBe(true);
    ahead = OAUTH_STATE_TTL_MS;
    try {
      await t.api.oauth.purgeExpired();
      expect(await t.db.prisma.mcpOAuthState.count({ where: { userId: u.id } })).toBe(0);
    } finally {
      ahead = 0;
    }
  });

  it("runs on a schedule once the app started", async () => {
    const u = await t.user();
    await stateRows(u.id, 5, new Date(clock() - 60_000));
    await eventually(async () => (await t.db.prisma.mcpOAuthState.count({ where: { userId: u.id } })) === 0, 5_000);
  });
});

describe("security headers and body limits", () => {
  it("every API response carries helmet's headers with a deny-all CSP", async () => {
    const u = await t.user();
    for (const res of [
      await fetch(`${t.url}/api/me`, { headers: u.auth }),
      await fetch(`${t.url}/api/me`),
      await fetch(`${t.url}/healthz`),
      await fetch(`${t.url}/api/openapi.json`),
      await fetch(`${t.url}/nope`),
    ]) {
      expect(res.headers.get("content-security-policy")).toContain("default-src 'none'");
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
      expect(res.headers.get("x-frame-options")).toBe("DENY");
      expect(res.headers.get("referrer-policy")).toBe("no-referrer");
      expect(res.headers.get("cross-origin-resource-policy")).toBe("same-site");
      expect(res.headers.get("x-powered-by")).toBeNull();
    }
  });

  it("a JSON body over 256 KiB answers 413 in the envelope", async () => {
    const u = await t.user();
    const res = await fetch(`${t.url}/api/tasks`, {
      method: "POST",
      headers: { ...u.auth, "content-type": "application/json" },
      body: JSON.stringify({ title: "x".repeat(300 * 1024) }),
    });
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("payload_too_large");
  });

  it("an unauthenticated oversized body is refused with 401 before it is read", async () => {
    const res = await rawRequest(`${t.url}/api/tasks`, {
      method: "POST",
      headers: [["content-type", "application/json"]],
      body: JSON.stringify({ title: "x".repeat(1024 * 1024) }),
    });
    expect(res.status).toBe(401);
  });

  it("a 100 KB Authorization header reaches the verifier (401), a head over the limit gets 431, never 5xx", async () => {
    const big = await rawRequest(`${t.url}/api/me`, { headers: [["authorization", `Bearer ${"a".repeat(100 * 1024)}`]] });
    expect(big.status).toBe(401);
    expect((big.json() as { error: { code: string } }).error.code).toBe("malformed_token");
    const huge = await rawRequest(`${t.url}/api/me`, { headers: [["x-filler", "a".repeat(200 * 1024)]] });
    expect(huge.status).toBe(431);
    expect((await fetch(`${t.url}/healthz`)).status).toBe(200);
  });
});
