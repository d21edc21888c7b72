import { USER_DELETION_TABLE, userDeletionRowSchema } from "@app/contracts";
import { createTestDatabase, type TestDatabase } from "@app/db/testing";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// The user_deletion outbox is the one table identity writes (through its Prisma model) and the API
// reads (by raw SQL, with the contract's table name and row type): the migrated table must be
// what packages/contracts/src/user-deletion.ts says it is.
let database: TestDatabase;
let client: pg.Client;
beforeAll(async () => {
  database = await createTestDatabase();
  client = new pg.Client({ connectionString: database.url });
  await client.connect();
});
afterAll(async () => {
  await client?.end();
  await database?.drop();
});

describe("the user_deletion outbox row", () => {
  it("has the contract's columns, nullable where the contract says", async () => {
    const { rows } = await client.query<{ column_name: string; is_nullable: "YES" | "NO" }>(
      "SELECT column_name, is_nullable FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1",
      [USER_DELETION_TABLE],
    );
    const columns = Object.fromEntries(rows.map((r) => [r.column_name, r.is_nullable === "YES"]));
    const contract = Object.fromEntries(
      Object.entries(userDeletionRowSchema.shape).map(([name, type]) => [name, type.safeParse(null).success]),
    );
    expect(columns).toEqual(contract);
  });

  it("reads back, as the API's raw queries see it, through the contract's schema", async () => {
    await client.query(`INSERT INTO ${USER_DELETION_TABLE} (user_id) VALUES ($1)`, ["u-row-test"]);
    const { rows } = await client.query(`SELECT * FROM ${USER_DELETION_TABLE} WHERE user_id = $1`, ["u-row-test"]);
    expect(userDeletionRowSchema.parse(rows[0])).toMatchObject({ user_id: "u-row-test", api_done_at: null, completed_at: null });
  });
});
