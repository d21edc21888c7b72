import path from "node:path";
import { type EmbeddedPostgresHandle, startEmbeddedPostgres } from "@app/db/embedded";
import { type ServiceUrls, setServiceRolePasswords } from "@app/db/roles";
import pg from "pg";

/** A database for the stack: the given DATABASE_URL, or an embedded server started here. */
export interface StackDatabase {
  url: string;
  embedded: EmbeddedPostgresHandle | undefined;
}

/** Creates `name` on the server at `serverUrl` if it does not exist. */
export async function ensureDatabase(serverUrl: string, name: string): Promise<string> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    const { rowCount } = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
    if (!rowCount) await client.query(`CREATE DATABASE "${name.replaceAll('"', '""')}"`);
  } finally {
    await client.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * Uses `given.url` (DATABASE_URL) as is when set; otherwise starts the embedded PostgreSQL kept
 * under `<dataDir>/pg` on `given.port` (EMBEDDED_PG_PORT; persistent, recovered if a killed run
 * left it running) with a database `app`.
 */
export async function openStackDatabase(
  dataDir: string,
  log: (line: string) => void,
  given: { url: string | undefined; port: number },
): Promise<StackDatabase> {
  if (given.url) return { url: given.url, embedded: undefined };
  const port = given.port;
  log(`starting embedded PostgreSQL (data in ${path.join(dataDir, "pg")}, port ${port})`);
  const embedded = await startEmbeddedPostgres({ dataDir: path.join(dataDir, "pg"), port, persistent: true });
  try {
    return { url: await ensureDatabase(embedded.url, "app"), embedded };
  } catch (error) {
    await embedded.stop();
    throw error;
  }
}

/**
 * Each service's database URL (docs/database-roles.md), once the migrations created the roles.
 * On the embedded server: the roles auth_identity and auth_api, whose passwords (from
 * `.data/secrets.json`) are set here on every start. With DATABASE_URL given:
 * IDENTITY_DATABASE_URL and API_DATABASE_URL when set, otherwise DATABASE_URL for both (a
 * superuser URL then runs without the boundary, for a quick local try; `pnpm doctor` warns).
 */
export async function serviceDatabaseUrls(
  database: StackDatabase,
  passwords: ServiceUrls,
  // start.ts passes the parsed ones (config.ts); the default reads them as that schema does.
  given: { identity: string | undefined; api: string | undefined } = {
    identity: process.env.IDENTITY_DATABASE_URL,
    api: process.env.API_DATABASE_URL,
  },
): Promise<ServiceUrls> {
  if (database.embedded) return setServiceRolePasswords(database.url, passwords);
  return { identity: given.identity || database.url, api: given.api || database.url };
}

/** `launchStack`'s `envFor`: identity processes get identity's DATABASE_URL, API processes the API's. */
export function databaseEnvFor(urls: ServiceUrls): (name: string) => Record<string, string> {
  return (name): Record<string, string> => {
    if (name.startsWith("identity")) return { DATABASE_URL: urls.identity };
    if (name.startsWith("api")) return { DATABASE_URL: urls.api };
    return {};
  };
}
