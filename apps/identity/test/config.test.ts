import { spawnSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { testConfig } from "../src/config.js";
import { DEFAULT_KEY_ACTIVATION_DELAY_MS } from "../src/services/key-set.js";

const base = { DATABASE_URL: "postgresql://app:pw@db.internal:5432/app", AUTH_SECRET: "x".repeat(32) };

describe("identity config: hardening settings", () => {
  it("has safe defaults: limits on, in-memory counters, no scheduled rotation, 10.5 min activation", () => {
    const c = testConfig(base);
    expect(c.rateLimits).toMatchObject({ ipMax: 100, ipWindowMs: 900_000, accountMax: 10, accountWindowMs: 900_000, redisUrl: undefined });
    expect(c.rateLimits).toMatchObject({ delayAfter: 5, delayMs: 500, delayMaxMs: 4_000 });
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
    expect(() => testConfig({ ...base, RATE_LIMIT_ACCOUNT_DELAY_MAX_MS: "60000" })).toThrow(
      /RATE_LIMIT_ACCOUNT_DELAY_MAX_MS must be at most 30000/,
    );
    expect(testConfig({ ...base, KEY_ROTATION_DAYS: "90" }).keyRotationMs).toBe(90 * 86_400_000);
  });
});

describe("identity config: settings shared with the API (packages/http-kit/src/settings/token.ts)", () => {
  it("requires BASE_URL in production and derives issuer and audience from it", () => {
    const prod = { ...base, NODE_ENV: "production", REQUIRE_EMAIL_VERIFICATION: "false" };
    expect(() => testConfig(prod)).toThrow(/BASE_URL is required in production/);
    const c = testConfig({ ...prod, BASE_URL: "https://auth.example.com/" });
    expect([c.baseUrl, c.issuer, c.audience]).toEqual(["https://auth.example.com", "https://auth.example.com", "https://auth.example.com"]);
  });

  it("takes JWT_ISSUER/JWT_AUDIENCE trimmed and refuses them empty", () => {
    const c = testConfig({ ...base, JWT_ISSUER: " urn:issuer ", JWT_AUDIENCE: "urn:aud" });
    expect([c.issuer, c.audience]).toEqual(["urn:issuer", "urn:aud"]);
    expect(() => testConfig({ ...base, JWT_ISSUER: "" })).toThrow(/JWT_ISSUER must not be empty/);
    expect(() => testConfig({ ...base, JWT_AUDIENCE: "  " })).toThrow(/JWT_AUDIENCE must not be empty/);
  });

  it("refuses a key activation delay shorter than the verifiers' JWKS max age + cooldown, naming the variables", () => {
    expect(() => testConfig({ ...base, KEY_ACTIVATION_DELAY_MS: "629999" })).toThrow(
      /KEY_ACTIVATION_DELAY_MS \(629999\) must be at least JWKS_CACHE_MAX_AGE_MS \+ JWKS_COOLDOWN_MS/,
    );
    expect(() => testConfig({ ...base, JWKS_CACHE_MAX_AGE_MS: "900000" })).toThrow(/KEY_ACTIVATION_DELAY_MS/);
    const fast = testConfig({ ...base, KEY_ACTIVATION_DELAY_MS: "1200", JWKS_CACHE_MAX_AGE_MS: "1000", JWKS_COOLDOWN_MS: "200" });
    expect(fast.keyActivationDelayMs).toBe(1200);
  });
});

describe("identity config: email verification (docs/accounts.md)", () => {
  const prod = { ...base, NODE_ENV: "production", BASE_URL: "https://auth.example.com" };
  const smtp = { SMTP_URL: "smtps://user:pass@mail.example.com:465" };

  it("requires a verified address by default in production, not in development or tests", () => {
    expect(testConfig({ ...prod, ...smtp }).requireEmailVerification).toBe(true);
    expect(testConfig({ ...base, NODE_ENV: "development" }).requireEmailVerification).toBe(false);
    expect(testConfig(base).requireEmailVerification).toBe(false);
    expect(testConfig({ ...prod, REQUIRE_EMAIL_VERIFICATION: "false" }).requireEmailVerification).toBe(false);
    expect(testConfig({ ...base, REQUIRE_EMAIL_VERIFICATION: "true" }).requireEmailVerification).toBe(true);
  });

  it("refuses production with verification required and no SMTP_URL, naming both variables", () => {
    expect(() => testConfig(prod)).toThrow(/SMTP_URL is required in production while REQUIRE_EMAIL_VERIFICATION is true/);
    expect(() => testConfig({ ...prod, REQUIRE_EMAIL_VERIFICATION: "true", SMTP_URL: " " })).toThrow(/SMTP_URL is required/);
    expect(testConfig({ ...base, NODE_ENV: "development", REQUIRE_EMAIL_VERIFICATION: "true" }).smtpUrl).toBeUndefined();
  });

  it("stops the real server at start-up with exit code 78 and the message", () => {
    const server = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "dist", "server.js");
    const env = { PATH: process.env.PATH, ...prod, DATABASE_URL: "postgresql://127.0.0.1:1/x" };
    const run = spawnSync(process.execPath, [server], { env, encoding: "utf8", timeout: 15_000 });
    expect(run.status).toBe(78);
    expect(run.stderr).toContain("SMTP_URL: SMTP_URL is required in production while REQUIRE_EMAIL_VERIFICATION is true");
  });
});
