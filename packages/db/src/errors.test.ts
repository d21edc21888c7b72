import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { createDb, type Db } from "./client.js";
import { isDatabaseUnavailable } from "./errors.js";
import { createTestDatabase, type TestDatabase } from "./testing.js";

// Real failures of a real PostgreSQL, through both ways the services query it: Prisma (the pg
// adapter) and the raw pg pool.
const open: Array<{ db: Db; database: TestDatabase }> = [];
afterEach(async () => {
  for (const { db, database } of open.splice(0)) {
    await db.close();
    await database.drop();
  }
});

async function fresh() {
  const database = await createTestDatabase();
  const db = createDb(database.url, { max: 2, connectionTimeoutMillis: 2_000 });
  open.push({ db, database });
  return { database, db };
}

async function admin(url: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

const failure = (work: Promise<unknown>) =>
  work.then(
    () => {
      throw new Error("expected the query to fail");
    },
    (error: unknown) => error,
  );

describe("isDatabaseUnavailable on a dropped or emptied database", () => {
  it("is true for a dropped table and a dropped column (Prisma P2021 and P2022, pg 42P01 and 42703)", async () => {
    const { database, db } = await fresh();
    await admin(database.url, 'DROP TABLE "session" CASCADE');
    await admin(database.url, 'ALTER TABLE "user" DROP COLUMN "name" CASCADE');
    const table = await failure(db.prisma.session.findMany());
    expect((table as { code?: string }).code).toBe("P2021");
    expect(isDatabaseUnavailable(table)).toBe(true);
    const column = await failure(db.prisma.user.findMany());
    expect((column as { code?: string }).code).toBe("P2022");
    expect(isDatabaseUnavailable(column)).toBe(true);
    const raw = await failure(db.pool.query('SELECT * FROM "session"'));
    expect((raw as { code?: string }).code).toBe("42P01");
    expect(isDatabaseUnavailable(raw)).toBe(true);
  });

  it("is true for a dropped schema (nothing migrated)", async () => {
    const { database, db } = await fresh();
    await admin(database.url, "DROP SCHEMA public CASCADE");
    expect(isDatabaseUnavailable(await failure(db.prisma.user.findMany()))).toBe(true);
    expect(isDatabaseUnavailable(await failure(db.pool.query('SELECT id FROM "user"')))).toBe(true);
  });

  it("is true for a dropped database, through open and new connections (P1003, 3D000)", async () => {
    const { database, db } = await fresh();
    await db.prisma.user.findMany();
    const base = process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL ?? "";
    await admin(base, `DROP DATABASE "${new URL(database.url).pathname.slice(1)}" WITH (FORCE)`);
    for (let i = 0; i < 3; i += 1) {
      expect(isDatabaseUnavailable(await failure(db.prisma.user.findMany()))).toBe(true);
      expect(isDatabaseUnavailable(await failure(db.pool.query("SELECT 1")))).toBe(true);
    }
  });

  it("stays false for a bad query on a healthy database", async () => {
    const { db } = await fresh();
    const id = randomUUID();
    await db.prisma.user.create({ data: { id, email: `${id}@example.com`, name: "n" } });
    expect(isDatabaseUnavailable(await failure(db.prisma.user.create({ data: { id, email: `${id}@example.com`, name: "n" } })))).toBe(
      false,
    );
    expect(isDatabaseUnavailable(await failure(db.pool.query("SELEC 1")))).toBe(false);
    expect(isDatabaseUnavailable(await failure(db.pool.query("SELECT 1/0")))).toBe(false);
  });
});
