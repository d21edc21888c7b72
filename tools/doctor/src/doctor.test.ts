import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createTestDatabase, type TestDatabase } from "@app/db/testing";
import { launchStack, type RunningStack } from "@app/stack";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runDoctor } from "./doctor.js";

const CLI = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "dist", "cli.js");
const ORIGIN = "http://localhost:5999";

interface Running {
  stack: RunningStack;
  database: TestDatabase;
  authSecret: string;
  uploads: string;
}

async function start(env: Record<string, string>): Promise<Running> {
  const database = await createTestDatabase();
  const authSecret = randomBytes(32).toString("base64url");
  const uploads = path.join(os.tmpdir(), `doctor-uploads-${randomBytes(4).toString("hex")}`);
  const stack = await launchStack({
    databaseUrl: database.url,
    port: 0,
    authSecret,
    dataEncryptionKey: randomBytes(32).toString("base64url"),
    env: { LOG_LEVEL: "warn", CORS_ORIGINS: ORIGIN, UPLOAD_DIR: uploads, ...env },
    onLine: () => undefined,
  });
  return { stack, database, authSecret, uploads };
}

let healthy: Running;
let broken: Running;
/**
 * The CLI's local-stack data directory: an empty one of the test's own, so that what a
 * developer's `pnpm start` left in the repository's .data/ never reaches these tests.
 */
let dataDir: string;
beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), "doctor-data-"));
  [healthy, broken] = await Promise.all([start({}), start({ CORS_EXPOSE_AUTH_HEADER: "false" })]);
});
afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
  await Promise.all(
    [healthy, broken].map(async (r) => {
      await r?.stack.stop();
      await r?.database.drop();
      if (r) await rm(r.uploads, { recursive: true, force: true });
    }),
  );
});

/** Runs `pnpm diagnose`'s entry point as a user would, with the test's own data directory. */
function cli(args: string[], env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  const clean = { ...process.env };
  for (const name of ["DATABASE_URL", "AUTH_SECRET", "TEST_DATABASE_URL"]) delete clean[name];
  const child = spawn(process.execPath, [CLI, ...args], {
    env: { ...clean, STACK_DATA_DIR: dataDir, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout.on("data", (d: Buffer) => {
    out += d.toString();
  });
  child.stderr.on("data", (d: Buffer) => {
    out += d.toString();
  });
  return new Promise((resolve) => child.once("exit", (code) => resolve({ code, out })));
}

const statusLines = (out: string) => out.split("\n").filter((l) => /^(PASS|FAIL|SKIP) {2}/.test(l));

/** The doctor's throwaway users left in a database. */
async function throwaways(databaseUrl: string): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM "user" WHERE email LIKE 'doctor+%@example.invalid'`);
    return rows[0]?.n ?? 0;
  } finally {
    await client.end();
  }
}

describe("pnpm diagnose", () => {
  it("passes every check, in the contract's order, against a healthy stack (exit 0)", async () => {
    const { code, out } = await cli(["--base-url", healthy.stack.baseUrl, "--origin", ORIGIN], {
      DATABASE_URL: healthy.database.url,
      AUTH_SECRET: healthy.authSecret,
    });
    expect(statusLines(out).map((l) => l.slice(0, 4))).toEqual(["PASS", "PASS", "PASS", "PASS", "PASS", "PASS", "PASS"]);
    expect(statusLines(out).map((l) => l.slice(6).split("  ")[0])).toEqual([
      "sign-in, then get-session yields a JWT in set-auth-jwt",
      `CORS lets ${ORIGIN} read set-auth-jwt from get-session`,
      "the API accepts the JWT as Authorization: Bearer",
      "AUTH_SECRET decrypts at least one signing key",
      "the jwks table holds at least one key",
      "GET /api/auth/jwks returns a keys array",
      "the MCP authorize route accepts the session cookie",
    ]);
    // The test database's URL logs in as the server's superuser: a warning, not a failure.
    expect(out).toMatch(/^WARN {2}the service's DATABASE_URL is not a superuser {2}— give each service a role of its own/m);
    expect(out).toContain("8 checks: 7 passed, 0 failed, 0 skipped, 1 warning(s)");
    expect(code).toBe(0);
    // With the database at hand, the throwaway user is gone afterwards.
    expect(out).toMatch(/^note: deleted the throwaway user doctor\+[0-9a-f]+@example\.invalid/m);
    expect(await throwaways(healthy.database.url)).toBe(0);
  });

  it("says the throwaway user remains, and how to avoid it, without the database", async () => {
    const { out } = await cli(["--base-url", broken.stack.baseUrl, "--origin", ORIGIN], {});
    expect(out).toMatch(/^note: the throwaway user doctor\+[0-9a-f]+@example\.invalid remains .*--email\/--password/m);
    expect(await throwaways(broken.database.url)).toBeGreaterThan(0);
  });

  it("reads a local stack's state from --data-dir ahead of STACK_DATA_DIR", async () => {
    // Left-over state of a local stack whose database is gone: its checks fail to connect.
    const leftover = await mkdtemp(path.join(os.tmpdir(), "doctor-leftover-"));
    await writeFile(path.join(leftover, "secrets.json"), JSON.stringify({ authSecret: "x".repeat(43) }));
    try {
      const base = ["--base-url", broken.stack.baseUrl, "--origin", ORIGIN];
      const used = await cli(base, { STACK_DATA_DIR: leftover, EMBEDDED_PG_PORT: "9" });
      expect(statusLines(used.out).filter((l) => l.includes("cannot read jwks"))).toHaveLength(2);
      const ignored = await cli([...base, "--data-dir", dataDir], { STACK_DATA_DIR: leftover, EMBEDDED_PG_PORT: "9" });
      expect(statusLines(ignored.out).filter((l) => l.startsWith("SKIP"))).toHaveLength(2);
    } finally {
      await rm(leftover, { recursive: true, force: true });
    }
  });

  it("does not warn about the database role when the service's role is an ordinary one", async () => {
    const role = `doctor_role_${randomBytes(4).toString("hex")}`;
    const admin = new pg.Client({ connectionString: healthy.database.url });
    await admin.connect();
    try {
      await admin.query(`CREATE ROLE ${role} LOGIN PASSWORD 'doctor-role-password'`);
      await admin.query(`GRANT SELECT ON jwks TO ${role}`);
      const url = new URL(healthy.database.url);
      url.username = role;
      url.password = "doctor-role-password";
      const email = `doctor-role-${randomBytes(4).toString("hex")}@example.com`;
      const password = "correct horse battery";
      await fetch(`${healthy.stack.baseUrl}/api/auth/sign-up/email`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ email, password, name: "D" }),
      });
      const results = await runDoctor({
        baseUrl: healthy.stack.baseUrl,
        origin: ORIGIN,
        email,
        password,
        databaseUrl: url.toString(),
        databaseSource: "environment",
        authSecret: healthy.authSecret,
      });
      expect(results.find((r) => r.id === "jwks-count")?.status).toBe("pass");
      expect(results.find((r) => r.id === "database-role")).toBeUndefined();
    } finally {
      await admin.query(`REVOKE ALL ON jwks FROM ${role}`).catch(() => undefined);
      await admin.query(`DROP ROLE IF EXISTS ${role}`).catch(() => undefined);
      await admin.end();
    }
  });

  it("fails the CORS check with its fix when set-auth-jwt is not exposed (exit 1)", async () => {
    const { code, out } = await cli(["--base-url", broken.stack.baseUrl, "--origin", ORIGIN], {});
    const cors = statusLines(out).find((l) => l.includes("CORS lets"));
    expect(cors).toMatch(/^FAIL {2}CORS lets .* — list set-auth-jwt in the exposed CORS headers/);
    expect(statusLines(out).filter((l) => l.startsWith("FAIL"))).toHaveLength(1);
    expect(statusLines(out).filter((l) => l.startsWith("SKIP"))).toHaveLength(2); // no DATABASE_URL given
    expect(code).toBe(1);
  });

  it("uses the given account, and flags an origin that is not allowed", async () => {
    const email = `doctor-user-${randomBytes(4).toString("hex")}@example.com`;
    const password = "correct horse battery";
    const up = await fetch(`${healthy.stack.baseUrl}/api/auth/sign-up/email`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email, password, name: "D" }),
    });
    expect(up.status).toBe(200);
    const results = await runDoctor({ baseUrl: healthy.stack.baseUrl, origin: "http://localhost:6000", email, password });
    const byId = new Map(results.map((r) => [r.id, r]));
    expect(byId.get("round-trip")).toMatchObject({ status: "pass", detail: "with the given credentials" });
    expect(byId.get("cors-exposes-jwt")).toMatchObject({ status: "fail", fix: expect.stringContaining("CORS_ORIGINS") });
    const wrong = await runDoctor({ baseUrl: healthy.stack.baseUrl, origin: ORIGIN, email, password: "not the password" });
    expect(wrong[0]).toMatchObject({ id: "round-trip", status: "fail", detail: "sign-in answered 401 invalid_credentials" });
    expect(wrong.find((r) => r.id === "mcp-cookie")?.status).toBe("skip");
  });

  it("fails the decrypt check when AUTH_SECRET is not the one that sealed the keys", async () => {
    const results = await runDoctor({
      baseUrl: healthy.stack.baseUrl,
      origin: ORIGIN,
      databaseUrl: healthy.database.url,
      authSecret: "some-other-secret-entirely-0123456789",
    });
    expect(results.find((r) => r.id === "auth-secret")).toMatchObject({ status: "fail", detail: expect.stringContaining("none of") });
    expect(results.find((r) => r.id === "jwks-count")?.status).toBe("pass");
  });

  it("reports an unreachable service as one failure", async () => {
    const { code, out } = await cli(["--base-url", "http://127.0.0.1:9"], {});
    expect(statusLines(out)).toEqual([expect.stringMatching(/^FAIL {2}http:\/\/127\.0\.0\.1:9 answers {2}— start the service/)]);
    expect(code).toBe(1);
  });
});
