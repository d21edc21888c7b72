import { createHash, randomBytes } from "node:crypto";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultMigrationsDir, migrate } from "./migrate.js";

const base = process.env.TEST_DATABASE_URL ?? "";
const name = `mig_${randomBytes(4).toString("hex")}`;
let url = "";
let dir = "";

async function sql<T extends pg.QueryResultRow>(text: string, target = url): Promise<T[]> {
  const c = new pg.Client({ connectionString: target });
  await c.connect();
  try {
    return (await c.query<T>(text)).rows;
  } finally {
    await c.end();
  }
}

beforeAll(async () => {
  await sql(`CREATE DATABASE "${name}"`, base);
  const u = new URL(base);
  u.pathname = `/${name}`;
  url = u.toString();
  dir = await mkdtemp(path.join(os.tmpdir(), "migrations-"));
});
afterAll(async () => {
  await sql(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`, base);
  await rm(dir, { recursive: true, force: true });
});

describe("migrate", () => {
  it("applies the repository's migrations once, with Prisma-compatible rows, even when two run at once", async () => {
    const results = await Promise.all([migrate(url), migrate(url)]);
    const applied = results.flatMap((r) => r.applied);
    const onDisk = (await import("node:fs")).readdirSync(defaultMigrationsDir, { withFileTypes: true }).filter((e) => e.isDirectory());
    expect(applied.sort()).toEqual(onDisk.map((e) => e.name).sort());
    const rows = await sql<{ migration_name: string; checksum: string; finished_at: Date | null; applied_steps_count: number }>(
      `SELECT migration_name, checksum, finished_at, applied_steps_count FROM "_prisma_migrations" ORDER BY migration_name`,
    );
    expect(rows).toHaveLength(onDisk.length);
    for (const row of rows) {
      const file = await readFile(path.join(defaultMigrationsDir, row.migration_name, "migration.sql"), "utf8");
      expect(row.checksum).toBe(createHash("sha256").update(file).digest("hex"));
      expect(row.finished_at).toBeInstanceOf(Date);
      expect(row.applied_steps_count).toBe(1);
    }
    const tables = await sql<{ table_name: string }>(`SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'`);
    expect(tables.map((t) => t.table_name)).toEqual(expect.arrayContaining(["user", "account", "session", "jwks", "user_role"]));
    expect((await migrate(url)).applied).toEqual([]);
  });

  it("rolls a failing migration back whole and refuses edited history", async () => {
    await mkdir(path.join(dir, "001_ok"));
    await writeFile(path.join(dir, "001_ok", "migration.sql"), "CREATE TABLE mig_probe (id int);");
    await mkdir(path.join(dir, "002_bad"));
    await writeFile(path.join(dir, "002_bad", "migration.sql"), "CREATE TABLE mig_half (id int);\nSELECT * FROM no_such_table;");
    const target = new URL(url);
    const scratch = `${name}_b`;
    await sql(`CREATE DATABASE "${scratch}"`, base);
    target.pathname = `/${scratch}`;
    try {
      await expect(migrate(target.toString(), dir)).rejects.toThrow(/002_bad failed/);
      const tables = await sql<{ t: string }>(
        `SELECT table_name AS t FROM information_schema.tables WHERE table_schema = 'public'`,
        target.toString(),
      );
      expect(tables.map((r) => r.t)).toContain("mig_probe");
      expect(tables.map((r) => r.t)).not.toContain("mig_half");
      await rm(path.join(dir, "002_bad"), { recursive: true });
      await writeFile(path.join(dir, "001_ok", "migration.sql"), "CREATE TABLE mig_probe (id bigint);");
      await expect(migrate(target.toString(), dir)).rejects.toThrow(/001_ok was edited/);
    } finally {
      await sql(`DROP DATABASE IF EXISTS "${scratch}" WITH (FORCE)`, base);
    }
  });
});
