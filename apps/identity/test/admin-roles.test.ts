import { randomUUID } from "node:crypto";
import { createDb, type Db } from "@app/db";
import { createTestDatabase, type TestDatabase } from "@app/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// prisma/migrations/20261126210000_admin_roles: identity's role may call set_user_admin, owned by
// the API's role, and through it grant or take the admin role; it still cannot write user_role.
const PERMISSION_DENIED = "42501";

let database: TestDatabase;
let superuser: Queryable;
let identity: Queryable;
let dbs: Db[] = [];

/** A pool's query method (each `Db` here holds one connection, so a session's state stays on it). */
type Queryable = Db["pool"];

function connect(url: string): Queryable {
  const db = createDb(url, { max: 1 });
  dbs.push(db);
  return db.pool;
}

/** The SQLSTATE a statement fails with, or "ok". */
async function outcome(client: Queryable, sql: string, values: unknown[] = []): Promise<string> {
  try {
    await client.query(sql, values);
    return "ok";
  } catch (error) {
    return (error as { code?: string }).code ?? String(error);
  }
}

async function seedUser(): Promise<string> {
  const id = randomUUID();
  await superuser.query(`INSERT INTO "user" (id, email, name, updated_at) VALUES ($1, $2, 'Ann', now())`, [id, `${id}@example.com`]);
  return id;
}

const setAdmin = async (client: Queryable, userId: string, admin: boolean) =>
  (await client.query<{ outcome: string }>("SELECT set_user_admin($1, $2) AS outcome", [userId, admin])).rows[0]?.outcome;
const rolesOf = async (userId: string) =>
  (await identity.query<{ role: string }>("SELECT role FROM role_directory WHERE user_id = $1", [userId])).rows.map((r) => r.role);

beforeAll(async () => {
  database = await createTestDatabase();
  superuser = connect(database.url);
  identity = connect(database.identityUrl);
});
afterAll(async () => {
  await Promise.all(dbs.map((db) => db.close()));
  dbs = [];
  await database?.drop();
});

describe("set_user_admin", () => {
  it("is owned by the API's role, runs with its rights on a fixed search path, and only identity may call it", async () => {
    const { rows } = await superuser.query<{ owner: string; definer: boolean; config: string[] }>(
      `SELECT pg_get_userbyid(proowner) AS owner, prosecdef AS definer, proconfig AS config FROM pg_proc WHERE proname = 'set_user_admin'`,
    );
    expect(rows).toEqual([{ owner: "auth_api", definer: true, config: ["search_path=public, pg_temp"] }]);
    const can = async (role: string) =>
      (
        await superuser.query<{ ok: boolean }>(`SELECT has_function_privilege($1, 'set_user_admin(text, boolean)', 'EXECUTE') AS ok`, [
          role,
        ])
      ).rows[0]?.ok;
    expect([await can("auth_identity"), await can("public")]).toEqual([true, false]);
  });

  it("lets identity grant and take the admin role, but never take it from the last admin", async () => {
    const [first, second] = [await seedUser(), await seedUser()];
    expect(await setAdmin(identity, first, true)).toBe("granted");
    expect(await setAdmin(identity, first, true)).toBe("unchanged");
    expect(await rolesOf(first)).toEqual(["admin"]);
    expect(await setAdmin(identity, first, false)).toBe("last_admin");
    expect(await rolesOf(first)).toEqual(["admin"]);
    expect(await setAdmin(identity, second, true)).toBe("granted");
    expect(await setAdmin(identity, first, false)).toBe("revoked");
    expect(await setAdmin(identity, first, false)).toBe("unchanged");
    expect([await rolesOf(first), await rolesOf(second)]).toEqual([[], ["admin"]]);
    expect(await setAdmin(identity, randomUUID(), true)).toBe("unknown_user");
  });

  it("leaves the API's other roles alone", async () => {
    const [user, other] = [await seedUser(), await seedUser()];
    await superuser.query(`INSERT INTO user_role (user_id, role) VALUES ($1, 'support'), ($2, 'admin')`, [user, other]);
    expect(await setAdmin(identity, user, true)).toBe("granted");
    expect(await setAdmin(identity, user, false)).toBe("revoked");
    expect(await rolesOf(user)).toEqual(["support"]);
  });

  it("still refuses identity any direct write to user_role, and a temporary table cannot stand in for it", async () => {
    const user = await seedUser();
    expect(await outcome(identity, `INSERT INTO user_role (user_id, role) VALUES ($1, 'admin')`, [user])).toBe(PERMISSION_DENIED);
    expect(await outcome(identity, `DELETE FROM user_role`)).toBe(PERMISSION_DENIED);
    expect(await outcome(identity, `UPDATE user_role SET role = 'admin'`)).toBe(PERMISSION_DENIED);
    expect(await outcome(identity, `SELECT * FROM user_role`)).toBe(PERMISSION_DENIED);

    // One connection, so the temporary table is in the session that calls the function.
    const shadowed = connect(database.identityUrl);
    await shadowed.query(`CREATE TEMP TABLE user_role (user_id text, role text, created_at timestamptz)`);
    expect(await setAdmin(shadowed, user, true)).toBe("granted");
    expect((await shadowed.query(`SELECT count(*)::int AS n FROM pg_temp.user_role`)).rows[0]?.n).toBe(0);
    expect(await rolesOf(user)).toEqual(["admin"]);
  });
});
