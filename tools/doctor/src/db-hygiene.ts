import pg from "pg";
import { type CheckResult, GROUPS, result } from "./checks.js";

/** The throwaway users the doctor signs up (tools/doctor/src/http-probe.ts); nothing else is ever deleted. */
const THROWAWAY = /^doctor\+[0-9a-f]+@example\.invalid$/;

async function withClient<T>(databaseUrl: string, run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 5_000 });
  try {
    await client.connect();
    return await run(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * Warns when the service's own database URL logs in as a superuser: a service needs only its
 * tables, and a superuser connection turns any SQL injection into control of the whole server.
 * Returns nothing when the role is an ordinary one (or cannot be read: the jwks checks report that).
 */
export async function checkDatabaseRole(databaseUrl: string): Promise<CheckResult | undefined> {
  const role = await withClient(databaseUrl, async (client) => {
    const { rows } = await client.query<{ rolname: string; rolsuper: boolean }>(
      "SELECT rolname, rolsuper FROM pg_roles WHERE rolname = current_user",
    );
    return rows[0];
  }).catch(() => undefined);
  if (!role?.rolsuper) return undefined;
  return result.warn(
    "database-role",
    GROUPS.restart,
    "the service's DATABASE_URL is not a superuser",
    `it logs in as ${role.rolname}, a superuser`,
    "give each service a role of its own with rights on its tables only, and put that role in DATABASE_URL",
  );
}

/**
 * Deletes the throwaway user (its account, sessions and roles follow by ON DELETE CASCADE,
 * prisma/schema.prisma). Identity has no endpoint to delete a user, so this needs the database.
 */
export async function deleteThrowawayUser(databaseUrl: string, email: string): Promise<number> {
  if (!THROWAWAY.test(email)) throw new Error(`refusing to delete ${email}: not a doctor throwaway user`);
  return withClient(databaseUrl, async (client) => {
    const { rowCount } = await client.query(`DELETE FROM "user" WHERE email = $1`, [email]);
    return rowCount ?? 0;
  });
}
