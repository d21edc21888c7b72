import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { formatReport, formatResult } from "./checks.js";
import { localDatabaseEnv } from "./local-stack.js";
import { DEFAULT_BASE_URL, DEFAULT_ORIGIN, parseArgs } from "./options.js";

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

describe("parseArgs", () => {
  it("defaults to pnpm start's base URL and web origin, secrets from the environment only", () => {
    const parsed = parseArgs([], { DATABASE_URL: "postgresql://db/x", AUTH_SECRET: "s" }, "/nowhere");
    expect(parsed).toEqual({
      kind: "run",
      notes: [],
      options: {
        baseUrl: DEFAULT_BASE_URL,
        origin: DEFAULT_ORIGIN,
        databaseUrl: "postgresql://db/x",
        databaseSource: "environment",
        authSecret: "s",
      },
    });
  });

  it("follows pnpm start's PORT and WEB_PORT for its defaults", () => {
    expect(parseArgs([], { PORT: "3300", WEB_PORT: "5373" }, "/nowhere")).toMatchObject({
      options: { baseUrl: "http://localhost:3300", origin: "http://localhost:5373" },
    });
    expect(parseArgs([], { WEB_PORT: "off" }, "/nowhere")).toMatchObject({
      options: { baseUrl: DEFAULT_BASE_URL, origin: DEFAULT_ORIGIN },
    });
  });

  it("takes a deployed base URL, an origin (reduced to its origin) and credentials", () => {
    const parsed = parseArgs(
      ["--", "--base-url", "https://api.example.com/", "--origin", "https://app.example.com/x", "--email", "a@b.c", "--password", "pw"],
      {},
      "/nowhere",
    );
    expect(parsed).toMatchObject({
      kind: "run",
      options: {
        baseUrl: "https://api.example.com",
        origin: "https://app.example.com",
        email: "a@b.c",
        password: "pw",
        databaseUrl: undefined,
      },
    });
  });

  it("refuses bad input with a usage error", () => {
    expect(parseArgs(["--base-url", "ftp://x"], {}, "/")).toMatchObject({ kind: "error" });
    expect(parseArgs(["--email", "a@b.c"], {}, "/")).toEqual({ kind: "error", message: "--email and --password go together" });
    expect(parseArgs(["--auth-secret", "x"], {}, "/")).toMatchObject({ kind: "error" });
    expect(parseArgs(["-h"], {}, "/")).toEqual({ kind: "help" });
  });

  it("uses pnpm start's local state against the local default when the environment names none", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "doctor-state-"));
    dirs.push(dir);
    await writeFile(path.join(dir, "secrets.json"), JSON.stringify({ authSecret: "local-secret", dataEncryptionKey: "k" }));
    const env = { STACK_DATA_DIR: dir, EMBEDDED_PG_PORT: "5555" };
    expect(parseArgs([], env, "/")).toMatchObject({
      kind: "run",
      options: {
        databaseUrl: "postgresql://postgres:postgres@127.0.0.1:5555/app",
        databaseSource: "local-stack",
        authSecret: "local-secret",
      },
    });
    // --data-dir names another directory (here an empty one): no local state, the checks skip.
    const empty = await mkdtemp(path.join(os.tmpdir(), "doctor-empty-"));
    dirs.push(empty);
    expect(parseArgs(["--data-dir", empty], env, "/")).toMatchObject({ options: { databaseUrl: undefined } });
    // The repository's own .data/ is the default only without STACK_DATA_DIR.
    expect(parseArgs([], { EMBEDDED_PG_PORT: "5555" }, path.dirname(dir))).toMatchObject({ options: { databaseUrl: undefined } });
    expect(parseArgs(["--base-url", "http://127.0.0.1:4000"], env, "/")).toMatchObject({ options: { authSecret: "local-secret" } });
    // Not against a remote base URL: those checks are skipped rather than aimed at the wrong database.
    expect(parseArgs(["--base-url", "https://api.example.com"], env, "/")).toMatchObject({ options: { databaseUrl: undefined } });
  });
});

describe("localDatabaseEnv (pnpm admin:grant)", () => {
  it("fills DATABASE_URL from pnpm start's local stack only when it is unset", async () => {
    const root = await mkdtemp(path.join(os.tmpdir(), "doctor-root-"));
    dirs.push(root);
    expect(localDatabaseEnv({}, root)).toEqual({ env: {}, note: undefined });
    await mkdir(path.join(root, ".data"));
    await writeFile(path.join(root, ".data", "secrets.json"), JSON.stringify({ authSecret: "s" }));
    const filled = localDatabaseEnv({ PATH: "/bin" }, root);
    expect(filled.env).toEqual({ PATH: "/bin", DATABASE_URL: "postgresql://postgres:postgres@127.0.0.1:54329/app" });
    expect(filled.note).toContain("127.0.0.1:54329/app");
    expect(localDatabaseEnv({ DATABASE_URL: "postgresql://db/x" }, root)).toEqual({
      env: { DATABASE_URL: "postgresql://db/x" },
      note: undefined,
    });
  });
});

describe("the report", () => {
  it("prints PASS|FAIL|SKIP lines with the fix, grouped by diagnostic list", () => {
    const report = formatReport([
      { id: "a", group: "g1", title: "first", status: "pass" },
      { id: "b", group: "g1", title: "second", status: "fail", detail: "saw x", fix: "do y" },
      { id: "c", group: "g2", title: "third", status: "skip", detail: "no db" },
    ]);
    expect(report).toBe(
      "# g1\nPASS  first\nFAIL  second  — do y [saw x]\n# g2\nSKIP  third  — skipped: no db\n3 checks: 1 passed, 1 failed, 1 skipped\n",
    );
    expect(formatResult({ id: "a", group: "g", title: "t", status: "pass", detail: "2 keys" })).toBe("PASS  t  (2 keys)");
  });
});
