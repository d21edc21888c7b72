import { describe, expect, it } from "vitest";
import { testConfig } from "../src/config.js";
import { DEFAULT_KEY_ACTIVATION_DELAY_MS } from "../src/services/key-set.js";

const base = { DATABASE_URL: "postgresql://app:pw@db.internal:5432/app", AUTH_SECRET: "x".repeat(32) };

describe("identity config: hardening settings", () => {
  it("has safe defaults: limits on, in-memory counters, no scheduled rotation, 10.5 min activation", () => {
    const c = testConfig(base);
    expect(c.rateLimits).toMatchObject({ ipMax: 100, ipWindowMs: 900_000, accountMax: 10, accountWindowMs: 900_000, redisUrl: undefined });
    expect(c.maxSessionsPerUser).toBe(50);
    expect(c.keyRotationMs).toBe(0);
    expect(c.keyActivationDelayMs).toBe(DEFAULT_KEY_ACTIVATION_DELAY_MS);
    expect(DEFAULT_KEY_ACTIVATION_DELAY_MS).toBe(630_000);
    expect(c.housekeepingIntervalMs).toBe(600_000);
  });

  it("shares Redis counters per database, whatever its credentials, and not across databases", () => {
    const a = testConfig(base).rateLimits.redisPrefix;
    expect(a).toMatch(/^rl:[0-9a-f]{12}:$/);
    expect(testConfig({ ...base, DATABASE_URL: "postgresql://app:rotated@db.internal:5432/app" }).rateLimits.redisPrefix).toBe(a);
    expect(testConfig({ ...base, DATABASE_URL: "postgresql://app:pw@db.internal:5432/other" }).rateLimits.redisPrefix).not.toBe(a);
    expect(testConfig({ ...base, RATE_LIMIT_REDIS_PREFIX: "rl:mine:" }).rateLimits.redisPrefix).toBe("rl:mine:");
    expect(a).not.toContain("pw");
  });

  it("refuses a REDIS_URL that is not redis:// or rediss://, and non-positive limits", () => {
    expect(() => testConfig({ ...base, REDIS_URL: "http://127.0.0.1:6379" })).toThrow(/REDIS_URL/);
    expect(testConfig({ ...base, REDIS_URL: "rediss://cache:6380" }).rateLimits.redisUrl).toBe("rediss://cache:6380");
    expect(() => testConfig({ ...base, RATE_LIMIT_IP_MAX: "0" })).toThrow();
    expect(testConfig({ ...base, KEY_ROTATION_DAYS: "90" }).keyRotationMs).toBe(90 * 86_400_000);
  });
});
