import { randomBytes } from "node:crypto";
import { createTestDatabase, type TestDatabase } from "@app/db/testing";
import { testRedis } from "@app/test-kit";
import request from "supertest";
import { afterAll, beforeAll, expect, it, vi } from "vitest";
import { EVENT_READ_LIMITS } from "../src/security-events/limits.js";
import { identityKit, type Kit, ORIGIN, signUp } from "./kit.js";
import { refusals } from "./metrics-kit.js";

// The feature routes' limiters (middleware/window-limits.ts) count in the Redis that sign-in's
// use. Skipped with the reason when no Redis answers, failed under CI=true (tools/test-kit/src/redis.ts).
const redis = await testRedis();

let database: TestDatabase;
const open: Kit[] = [];

redis.describe("feature route limits shared through Redis", () => {
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await Promise.all(open.splice(0).map((k) => k.close()));
    await database?.drop();
  });

  it("one per-user count of the event log's reads across two identity instances", async () => {
    // Two instances of one deployment: one database, one Redis, one key prefix.
    const env = { REDIS_URL: redis.url, RATE_LIMIT_REDIS_PREFIX: `rl:test:${randomBytes(6).toString("hex")}:` };
    const a = await identityKit({ database, env });
    const b = await identityKit({ database, env });
    open.push(a, b);
    for (const k of [a, b]) expect(k.rateLimits.store).toBe("redis");
    // The connection opens in the background and a limiter lets requests through until then.
    await vi.waitFor(() => {
      for (const k of [a, b]) expect(k.logs.join("")).toContain("rate limit store (Redis) connected");
    });
    const { cookie } = await signUp(a.app);
    const read = (k: Kit) => request(k.app).get("/api/auth/account-events?limit=1").set("origin", ORIGIN).set("cookie", cookie);

    const before = (await refusals("account-events-user")) ?? 0;
    const statuses: number[] = [];
    for (let i = 0; i < EVENT_READ_LIMITS.perUser; i += 1) statuses.push((await read(i % 2 === 0 ? a : b)).status);
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
    // Each instance has served half the limit: the next read is refused on either.
    for (const k of [a, b]) {
      const refused = await read(k);
      expect(refused.status).toBe(429);
      expect(refused.body.error.code).toBe("rate_limited");
      expect(Number(refused.headers["retry-after"])).toBeGreaterThan(0);
    }
    expect(await refusals("account-events-user")).toBe(before + 2);
    // Another user is not held back by it.
    const other = await signUp(b.app);
    expect((await request(a.app).get("/api/auth/account-events").set("origin", ORIGIN).set("cookie", other.cookie)).status).toBe(200);
  });
});
