import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb } from "./client.js";
import { createCountedDb } from "./statement-count.js";
import { createTestDatabase, type TestDatabase } from "./testing.js";

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database?.drop();
});

describe("the statement counter", () => {
  it("is not part of the Db the services run on", async () => {
    const db = createDb(database.url, { max: 1 });
    try {
      expect(await db.ping()).toBe(true);
      expect("queryCount" in db).toBe(false);
    } finally {
      await db.close();
    }
  });

  it("counts every statement of a test's Db, through the pool and through Prisma", async () => {
    const db = createCountedDb(database.url, { max: 2 });
    try {
      expect(db.queryCount()).toBe(0);
      expect(await db.ping()).toBe(true);
      expect(db.queryCount()).toBe(1);
      await db.prisma.$queryRaw`SELECT 1`;
      expect(db.queryCount()).toBe(2);
    } finally {
      await db.close();
    }
  });
});
