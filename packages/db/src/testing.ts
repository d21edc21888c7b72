import { randomBytes } from "node:crypto";
import pg from "pg";
import { migrate } from "./migrate.js";
import { API_ROLE, IDENTITY_ROLE, type ServiceUrls, urlAs } from "./roles.js";

export { type CountedDb, createCountedDb } from "./statement-count.js";

/** A migrated, empty database of its own for one test file. */
export interface TestDatabase {
  /** The admin URL (the server's superuser): migrations, seeding rows across the boundary. */
  url: string;
  /** Identity's URL: a login role of this database only, member of auth_identity. */
  identityUrl: string;
  /** The API's URL: a login role of this database only, member of auth_api. */
  apiUrl: string;
  drop(): Promise<void>;
}

/** Service URLs of the test databases this process created, by admin URL (see {@link serviceUrlsOf}). */
const created = new Map<string, ServiceUrls>();

/**
 * The identity and API URLs of a database made by {@link createTestDatabase} in this process,
 * or undefined for any other URL (a launcher then passes that URL to both services).
 */
export function serviceUrlsOf(adminUrl: string): ServiceUrls | undefined {
  return created.get(adminUrl);
}

/** Runs each statement on its own (DROP DATABASE refuses a multi-statement, implicit transaction). */
async function run(url: string, ...statements: string[]): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    for (const sql of statements) await c.query(sql);
  } finally {
    await c.end();
  }
}

/**
 * Creates a fresh database on the server named by `TEST_DATABASE_URL` (or `DATABASE_URL`),
 * applies all migrations and returns its URLs. `pnpm test` sets the variable, starting an
 * embedded PostgreSQL when none was given.
 *
 * The services' URLs use login roles made for this database and dropped with it, members of
 * auth_identity and auth_api: tests run many databases on one server at once, and the shared
 * roles' passwords (needed under the embedded server's password auth) are left alone. A member
 * holds exactly its group's privileges, which is what a deployment with its own login names gets.
 */
export async function createTestDatabase(): Promise<TestDatabase> {
  const base = process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL;
  if (!base) throw new Error("TEST_DATABASE_URL is not set: run the tests through `pnpm test`");
  const name = `t_${Date.now().toString(36)}_${randomBytes(4).toString("hex")}`;
  await run(base, `CREATE DATABASE "${name}"`);
  const url = new URL(base);
  url.pathname = `/${name}`;
  const adminUrl = url.toString();
  await migrate(adminUrl);
  const logins = { identity: `${name}_identity`, api: `${name}_api` };
  const passwords = { identity: randomBytes(16).toString("hex"), api: randomBytes(16).toString("hex") };
  await run(
    base,
    `CREATE ROLE "${logins.identity}" LOGIN PASSWORD '${passwords.identity}' IN ROLE ${IDENTITY_ROLE}`,
    `CREATE ROLE "${logins.api}" LOGIN PASSWORD '${passwords.api}' IN ROLE ${API_ROLE}`,
  );
  const urls = { identity: urlAs(adminUrl, logins.identity, passwords.identity), api: urlAs(adminUrl, logins.api, passwords.api) };
  created.set(adminUrl, urls);
  return {
    url: adminUrl,
    identityUrl: urls.identity,
    apiUrl: urls.api,
    async drop() {
      created.delete(adminUrl);
      await run(
        base,
        `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`,
        `DROP ROLE IF EXISTS "${logins.identity}"`,
        `DROP ROLE IF EXISTS "${logins.api}"`,
      );
    },
  };
}
