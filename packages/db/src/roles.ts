import pg from "pg";

/**
 * The per-service database roles the migration `prisma/migrations/*_service_roles` creates:
 * identity's owns user, account, session and jwks; the API's owns the business tables and
 * user_role and reads users through the `user_directory` view only (docs/database-roles.md).
 */
export const IDENTITY_ROLE = "auth_identity";
export const API_ROLE = "auth_api";
export type ServiceRole = typeof IDENTITY_ROLE | typeof API_ROLE;

/** Connection strings of the two services. */
export interface ServiceUrls {
  identity: string;
  api: string;
}

/** `url` with its user and password replaced: the same server and database, as `user`. */
export function urlAs(url: string, user: string, password: string | undefined): string {
  const u = new URL(url);
  u.username = encodeURIComponent(user);
  u.password = password === undefined ? "" : encodeURIComponent(password);
  return u.toString();
}

async function withClient<T>(url: string, run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  client.on("error", () => undefined);
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

/**
 * Sets a service role's password (an admin connection; after the migrations created the role).
 * ALTER ROLE takes no bind parameters, so the password goes in as an escaped literal.
 */
export function setRolePassword(adminUrl: string, role: ServiceRole, password: string): Promise<void> {
  return withClient(adminUrl, async (client) => {
    await client.query(`ALTER ROLE ${client.escapeIdentifier(role)} PASSWORD ${client.escapeLiteral(password)}`);
  });
}

/** Sets both service roles' passwords and returns each service's URL on the admin URL's database. */
export async function setServiceRolePasswords(adminUrl: string, passwords: ServiceUrls): Promise<ServiceUrls> {
  await setRolePassword(adminUrl, IDENTITY_ROLE, passwords.identity);
  await setRolePassword(adminUrl, API_ROLE, passwords.api);
  return { identity: urlAs(adminUrl, IDENTITY_ROLE, passwords.identity), api: urlAs(adminUrl, API_ROLE, passwords.api) };
}

/**
 * True when `url` connects as a superuser, which PostgreSQL never refuses anything: a service on
 * such a URL runs without the boundary (fine for a quick local try, wrong in production).
 */
export function isSuperuser(url: string): Promise<boolean> {
  return withClient(url, async (client) => {
    const { rows } = await client.query<{ rolsuper: boolean }>("SELECT rolsuper FROM pg_roles WHERE rolname = current_user");
    return rows[0]?.rolsuper === true;
  });
}
