import { createDb, type Db } from "@app/db";

/**
 * The test database that holds `userId`, opened as the server's administrator: the conformance
 * context names no database, and the user's id is a fresh UUID, so exactly one test database
 * holds it. The caller closes it.
 */
export async function databaseHolding(userId: string): Promise<Db> {
  const base = process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL;
  if (!base) throw new Error("TEST_DATABASE_URL is not set");
  const server = createDb(base, { max: 1 });
  let names: string[];
  try {
    const { rows } = await server.pool.query<{ datname: string }>(`SELECT datname FROM pg_database WHERE datname LIKE 't\\_%'`);
    names = rows.map((row) => row.datname);
  } finally {
    await server.close();
  }
  for (const name of names) {
    const url = new URL(base);
    url.pathname = `/${name}`;
    const db = createDb(url.toString(), { max: 2 });
    try {
      const { rowCount } = await db.pool.query(`SELECT 1 FROM "user" WHERE id = $1`, [userId]);
      if (rowCount) return db;
    } catch {
      // A database being dropped or not yet migrated by another test: not this one.
    }
    await db.close();
  }
  throw new Error(`no test database holds user ${userId}`);
}

/**
 * Grants the admin role as `pnpm admin:grant` would: a write to the API's user_role, which
 * identity's own role may not make, as the server's administrator in the user's test database.
 */
export async function grantAdmin(userId: string): Promise<void> {
  const db = await databaseHolding(userId);
  try {
    await db.pool.query(`INSERT INTO user_role (user_id, role) VALUES ($1, 'admin') ON CONFLICT DO NOTHING`, [userId]);
  } finally {
    await db.close();
  }
}
