import { randomBytes } from "node:crypto";
import pg from "pg";
import { migrate } from "./migrate.js";

/** A migrated, empty database of its own for one test file. */
export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

/**
 * Creates a fresh database on the server named by `TEST_DATABASE_URL` (or `DATABASE_URL`),
 * applies all migrations and returns its URL. `pnpm test` sets the variable, starting an
 * embedded PostgreSQL when none was given.
 */
export async function createTestDatabase(): Promise<TestDatabase> {
  const base = process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL;
  if (!base) throw new Error("TEST_DATABASE_URL is not set: run the tests through `pnpm test`");
  const name = `t_${Date.now().toString(36)}_${randomBytes(4).toString("hex")}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${name}"`);
  } finally {
    await admin.end();
  }
  const url = new URL(base);
  url.pathname = `/${name}`;
  await migrate(url.toString());
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: base });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}
