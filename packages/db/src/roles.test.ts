import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API_ROLE, IDENTITY_ROLE, isSuperuser } from "./roles.js";
import { createTestDatabase, type TestDatabase } from "./testing.js";

// The service boundary as PostgreSQL enforces it (prisma/migrations/*_service_roles): each
// service's connection is refused the other's tables with SQLSTATE 42501.
const PERMISSION_DENIED = "42501";
const IDENTITY_TABLES = [
  "user",
  "account",
  "session",
  "jwks",
  "verification",
  "mail_outbox",
  "two_factor",
  "trusted_device",
  "passkey",
  "auth_challenge",
  "organization",
  "member",
  "invitation",
  "team",
  "team_member",
  "oauth_payload",
  "auth_event",
  "webhook_endpoint",
  "webhook_message",
  "webhook_delivery",
];
/** Identity's, with the narrow grants prisma/migrations/*_account_lifecycle gives the API. */
const IDENTITY_SHARED = ["user_directory", "user_deletion", "organization_membership", "organization_deletion"];
const API_TABLES = [
  "user_role",
  "project",
  "agent",
  "chat",
  "chat_message",
  "task",
  "task_message",
  "task_event",
  "upload",
  "mcp_server",
  "mcp_oauth_state",
];
/** The API's, with the one grant prisma/migrations/*_organizations gives identity. */
const API_SHARED = ["role_directory"];

let database: TestDatabase;
let admin: pg.Client;
let api: pg.Client;
let identity: pg.Client;

async function connect(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return client;
}

/** The SQLSTATE a statement fails with, or "ok". */
async function outcome(client: pg.Client, sql: string, values: unknown[] = []): Promise<string> {
  try {
    await client.query(sql, values);
    return "ok";
  } catch (error) {
    return (error as { code?: string }).code ?? String(error);
  }
}

async function seedUser(): Promise<string> {
  const id = randomUUID();
  await admin.query(`INSERT INTO "user" (id, email, name, updated_at) VALUES ($1, $2, 'Ann', now())`, [id, `${id}@example.com`]);
  return id;
}

beforeAll(async () => {
  database = await createTestDatabase();
  [admin, api, identity] = await Promise.all([connect(database.url), connect(database.apiUrl), connect(database.identityUrl)]);
});
afterAll(async () => {
  await Promise.all([admin, api, identity].map((c) => c?.end()));
  await database?.drop();
});

describe("database roles", () => {
  it("gives every table one service owner: identity's tables, the API's business tables and user_role", async () => {
    const { rows } = await admin.query<{ name: string; owner: string }>(
      `SELECT c.relname AS name, pg_get_userbyid(c.relowner) AS owner FROM pg_class c
       JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = 'public' AND c.relkind IN ('r', 'v', 'S') AND c.relname <> '_prisma_migrations'`,
    );
    const owners = Object.fromEntries(rows.map((r) => [r.name, r.owner]));
    for (const t of [...IDENTITY_TABLES, ...IDENTITY_SHARED]) expect(owners[t], t).toBe(IDENTITY_ROLE);
    // A table added by a later migration without its OWNER TO line fails here.
    for (const [name, owner] of Object.entries(owners)) {
      if (!IDENTITY_TABLES.includes(name) && !IDENTITY_SHARED.includes(name)) expect(owner, name).toBe(API_ROLE);
    }
    for (const t of [...API_TABLES, ...API_SHARED]) expect(owners[t], t).toBe(API_ROLE);
    expect(await isSuperuser(database.apiUrl)).toBe(false);
    expect(await isSuperuser(database.identityUrl)).toBe(false);
    expect(await isSuperuser(database.url)).toBe(true);
  });

  it("refuses the API's role every identity table, the migrations table and writes to the projection", async () => {
    for (const table of IDENTITY_TABLES) {
      expect(await outcome(api, `SELECT * FROM "${table}" LIMIT 1`), table).toBe(PERMISSION_DENIED);
      expect(await outcome(api, `DELETE FROM "${table}"`), table).toBe(PERMISSION_DENIED);
    }
    expect(await outcome(api, `SELECT id FROM "user" WHERE id = 'x'`)).toBe(PERMISSION_DENIED);
    expect(await outcome(api, `INSERT INTO "user" (id, email, name, updated_at) VALUES ('x', 'x@example.com', 'x', now())`)).toBe(
      PERMISSION_DENIED,
    );
    expect(await outcome(api, `SELECT * FROM "_prisma_migrations"`)).toBe(PERMISSION_DENIED);
    expect(await outcome(api, `UPDATE "user_directory" SET name = 'x'`)).toBe(PERMISSION_DENIED);
    // The deletion outbox: the API reads it and marks its own part done, nothing more.
    expect(await outcome(api, `SELECT user_id FROM "user_deletion" WHERE api_done_at IS NULL`)).toBe("ok");
    expect(await outcome(api, `UPDATE "user_deletion" SET api_done_at = now() WHERE false`)).toBe("ok");
    expect(await outcome(api, `UPDATE "user_deletion" SET completed_at = now() WHERE false`)).toBe(PERMISSION_DENIED);
    expect(await outcome(api, `DELETE FROM "user_deletion"`)).toBe(PERMISSION_DENIED);
    expect(await outcome(api, `INSERT INTO "user_deletion" (user_id) VALUES ('x')`)).toBe(PERMISSION_DENIED);
    expect(await outcome(api, `CREATE TABLE api_scratch (id int)`)).toBe(PERMISSION_DENIED);
    // Memberships: read through the projection; the organizations' deletion outbox as user_deletion's.
    expect(await outcome(api, `SELECT "organization_id", "user_id", "role" FROM "organization_membership" LIMIT 1`)).toBe("ok");
    expect(await outcome(api, `UPDATE "organization_membership" SET role = 'owner'`)).toBe(PERMISSION_DENIED);
    expect(await outcome(api, `UPDATE "organization_deletion" SET api_done_at = now() WHERE false`)).toBe("ok");
    expect(await outcome(api, `UPDATE "organization_deletion" SET completed_at = now() WHERE false`)).toBe(PERMISSION_DENIED);
    // The shared role itself, not only the test's login member of it.
    await admin.query(`SET ROLE ${API_ROLE}`);
    try {
      expect(await outcome(admin, `SELECT secret_hash FROM "session" LIMIT 1`)).toBe(PERMISSION_DENIED);
      expect(await outcome(admin, `SELECT private_key FROM "jwks" LIMIT 1`)).toBe(PERMISSION_DENIED);
    } finally {
      await admin.query("RESET ROLE");
    }
  });

  it("lets the API read users through the projection only, and own its tables", async () => {
    const userId = await seedUser();
    const { rows, fields } = await api.query(`SELECT * FROM "user_directory" WHERE id = $1`, [userId]);
    expect(fields.map((f) => f.name)).toEqual(["id", "email", "name", "created_at"]);
    expect(rows).toHaveLength(1);
    // The foreign key to "user" is checked with the owner of "user"'s rights: no grant needed.
    expect(
      await outcome(api, `INSERT INTO "task" (id, user_id, title, updated_at) VALUES ($1, $2, 't', now())`, [randomUUID(), userId]),
    ).toBe("ok");
    expect(
      await outcome(api, `INSERT INTO "task" (id, user_id, title, updated_at) VALUES ($1, 'nobody', 't', now())`, [randomUUID()]),
    ).toBe("23503");
    expect(await outcome(api, `INSERT INTO "user_role" (user_id, role) VALUES ($1, 'admin')`, [userId])).toBe("ok");
    expect(await outcome(api, `DELETE FROM "user_role" WHERE user_id = $1`, [userId])).toBe("ok");
    expect(await outcome(api, `INSERT INTO "task_event" (task_id, user_id, type, data) SELECT id, user_id, 'x', '{}' FROM task`)).toBe(
      "ok",
    );
  });

  it("refuses identity's role the business tables, and its user deletes still cascade into them", async () => {
    for (const table of API_TABLES) expect(await outcome(identity, `SELECT 1 FROM "${table}" LIMIT 1`), table).toBe(PERMISSION_DENIED);
    // Identity reads who has which role through role_directory, and writes nothing there.
    expect(await outcome(identity, `SELECT "user_id", "role" FROM "role_directory" LIMIT 1`)).toBe("ok");
    expect(await outcome(identity, `INSERT INTO "user_role" ("user_id", "role") VALUES ('x', 'admin')`)).toBe(PERMISSION_DENIED);
    const userId = await seedUser();
    await api.query(`INSERT INTO "task" (id, user_id, title, updated_at) VALUES ($1, $2, 't', now())`, [randomUUID(), userId]);
    await api.query(`INSERT INTO "user_role" (user_id, role) VALUES ($1, 'admin')`, [userId]);
    expect(await outcome(identity, `SELECT email FROM "user" WHERE id = $1`, [userId])).toBe("ok");
    // ON DELETE CASCADE runs with the rights of the referencing tables' owner.
    expect(await outcome(identity, `DELETE FROM "user" WHERE id = $1`, [userId])).toBe("ok");
    const left = await admin.query(
      `SELECT (SELECT count(*) FROM task WHERE user_id = $1)::int AS tasks, (SELECT count(*) FROM user_role WHERE user_id = $1)::int AS roles`,
      [userId],
    );
    expect(left.rows[0]).toEqual({ tasks: 0, roles: 0 });
  });
});
