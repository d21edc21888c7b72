import { createHash, randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";

/** Prisma's own advisory-lock key for migrations, so `prisma migrate` and this applier exclude each other. */
const PRISMA_MIGRATE_LOCK = 72707369;

/** The repository's `prisma/migrations` folder. */
export const defaultMigrationsDir = findMigrationsDir();

function findMigrationsDir(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (dir !== path.dirname(dir)) {
    const candidate = path.join(dir, "prisma", "migrations");
    if (existsSync(candidate)) return candidate;
    dir = path.dirname(dir);
  }
  return path.resolve("prisma", "migrations");
}

/** Result of {@link migrate}: the migrations applied by this call, in order. */
export interface MigrateResult {
  applied: string[];
}

const CREATE_TABLE = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
  "id" VARCHAR(36) PRIMARY KEY NOT NULL,
  "checksum" VARCHAR(64) NOT NULL,
  "finished_at" TIMESTAMPTZ,
  "migration_name" VARCHAR(255) NOT NULL,
  "logs" TEXT,
  "rolled_back_at" TIMESTAMPTZ,
  "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "applied_steps_count" INTEGER NOT NULL DEFAULT 0
)`;

/**
 * Applies pending SQL migrations from `prisma/migrations`, the way `prisma migrate deploy` does:
 * under Prisma's advisory lock, one transaction per migration, writing Prisma-compatible
 * `_prisma_migrations` rows (sha256 checksum of migration.sql) so `prisma migrate status` agrees.
 * Refuses to run when an applied migration's file was edited or a failed migration is recorded.
 */
export async function migrate(databaseUrl: string, migrationsDir = defaultMigrationsDir): Promise<MigrateResult> {
  const client = new pg.Client({ connectionString: databaseUrl });
  // A dropped connection surfaces as a failed query below, not as an unhandled 'error' event.
  client.on("error", () => undefined);
  await client.connect();
  try {
    await client.query("SELECT pg_advisory_lock($1)", [PRISMA_MIGRATE_LOCK]);
    await client.query(CREATE_TABLE);
    const { rows } = await client.query<{ migration_name: string; checksum: string; finished_at: Date | null }>(
      `SELECT migration_name, checksum, finished_at FROM "_prisma_migrations" WHERE rolled_back_at IS NULL`,
    );
    const done = new Map(rows.map((r) => [r.migration_name, r]));
    const names = (await readdir(migrationsDir, { withFileTypes: true }))
      .filter((e) => e.isDirectory())
      .map((e) => e.name)
      .sort();
    const applied: string[] = [];
    for (const name of names) {
      const sql = await readFile(path.join(migrationsDir, name, "migration.sql"), "utf8");
      const checksum = createHash("sha256").update(sql).digest("hex");
      const prior = done.get(name);
      if (prior) {
        if (!prior.finished_at) throw new Error(`migration ${name} failed earlier; resolve it before migrating`);
        if (prior.checksum !== checksum) throw new Error(`migration ${name} was edited after it was applied`);
        continue;
      }
      const id = randomUUID();
      await client.query("BEGIN");
      try {
        await client.query(sql);
        await client.query(
          `INSERT INTO "_prisma_migrations" (id, checksum, finished_at, migration_name, applied_steps_count)
           VALUES ($1, $2, now(), $3, 1)`,
          [id, checksum, name],
        );
        await client.query("COMMIT");
      } catch (error) {
        await client.query("ROLLBACK");
        throw new Error(`migration ${name} failed: ${(error as Error).message}`, { cause: error });
      }
      applied.push(name);
    }
    return { applied };
  } finally {
    await client.query("SELECT pg_advisory_unlock($1)", [PRISMA_MIGRATE_LOCK]).catch(() => undefined);
    await client.end();
  }
}
