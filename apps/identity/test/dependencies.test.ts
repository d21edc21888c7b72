import { spawnSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createDb } from "@app/db";
import { createLogger } from "@app/http-kit";
import request from "supertest";
import { describe, expect, it } from "vitest";
import { createApp } from "../src/app.js";
import { testConfig } from "../src/config.js";

const server = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "dist", "server.js");

describe("configuration", () => {
  it("stops start-up in production with a clear message when AUTH_SECRET is short or missing", () => {
    const env = { PATH: process.env.PATH, NODE_ENV: "production", DATABASE_URL: "postgresql://127.0.0.1:1/x" };
    const short = spawnSync(process.execPath, [server], { env: { ...env, AUTH_SECRET: "too-short" }, encoding: "utf8", timeout: 15_000 });
    expect(short.status).toBe(78);
    expect(short.stderr).toContain("AUTH_SECRET must be at least 32 characters in production");
    expect(short.stderr).not.toContain("too-short");
    const missing = spawnSync(process.execPath, [server], { env, encoding: "utf8", timeout: 15_000 });
    expect(missing.status).toBe(78);
    expect(missing.stderr).toContain("AUTH_SECRET");
  });

  it("stops start-up when a fresh key would be unknown to verifiers (activation delay < JWKS max age + cooldown)", () => {
    const env = { PATH: process.env.PATH, DATABASE_URL: "postgresql://127.0.0.1:1/x", AUTH_SECRET: "x".repeat(32) };
    const run = spawnSync(process.execPath, [server], {
      env: { ...env, KEY_ACTIVATION_DELAY_MS: "1000", JWKS_CACHE_MAX_AGE_MS: "1000", JWKS_COOLDOWN_MS: "200" },
      encoding: "utf8",
      timeout: 15_000,
    });
    expect(run.status).toBe(78);
    expect(run.stderr).toMatch(/KEY_ACTIVATION_DELAY_MS \(1000\) must be at least JWKS_CACHE_MAX_AGE_MS \+ JWKS_COOLDOWN_MS/);
  });
});

describe("database unreachable", () => {
  it("answers 503 in the envelope, never 500, and /readyz says so", async () => {
    const url = "postgresql://postgres@127.0.0.1:1/nowhere";
    const db = createDb(url, { connectionTimeoutMillis: 500 });
    const logger = createLogger({ name: "t", level: "silent" });
    const { app } = createApp({ config: testConfig({ DATABASE_URL: url, AUTH_SECRET: "x".repeat(32) }), db, logger });
    const res = await request(app).post("/api/auth/sign-in/email").send({ email: "a@b.co", password: "whatever1" }).expect(503);
    expect(res.body).toEqual({
      ok: false,
      error: { code: "service_unavailable", message: "service unavailable" },
      code: "service_unavailable",
      message: "service unavailable",
    });
    await request(app).get("/api/auth/jwks").expect(503);
    await request(app)
      .post("/api/auth/get-session")
      .set("cookie", "identity.session_token=AAAAAAAAAAAAAAAAAAAAAA.BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB")
      .expect(503);
    await request(app).get("/readyz").expect(503);
    await request(app).get("/healthz").expect(200);
    await db.close();
  });
});
