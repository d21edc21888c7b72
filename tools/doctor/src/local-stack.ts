import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** The embedded PostgreSQL port `pnpm start` uses unless EMBEDDED_PG_PORT says otherwise (tools/stack/src/database.ts). */
export const DEFAULT_EMBEDDED_PG_PORT = "54329";

/** What `pnpm start` left in its data directory that the commands here can use. */
export interface LocalStack {
  /** The admin connection to the embedded PostgreSQL's `app` database. */
  databaseUrl: string;
  /** The development AUTH_SECRET from `secrets.json`, when readable. */
  authSecret: string | undefined;
}

/** The repository root: the nearest parent of `from` holding pnpm-workspace.yaml. */
export function findRepoRoot(from: string = path.dirname(fileURLToPath(import.meta.url))): string {
  let dir = from;
  while (dir !== path.dirname(dir)) {
    if (existsSync(path.join(dir, "pnpm-workspace.yaml"))) return dir;
    dir = path.dirname(dir);
  }
  return process.cwd();
}

/** `pnpm start`'s data directory, as tools/stack/src/paths.ts picks it: STACK_DATA_DIR, else `<root>/.data`. */
export function localDataDir(root: string, env: NodeJS.ProcessEnv): string {
  return env.STACK_DATA_DIR || path.join(root, ".data");
}

/**
 * Reads `pnpm start`'s local state from `dataDir` (its `secrets.json` marks a local stack), or
 * undefined when there is none. The database URL is the embedded server's admin connection.
 */
export function readLocalStack(dataDir: string, env: NodeJS.ProcessEnv): LocalStack | undefined {
  const secretsFile = path.join(dataDir, "secrets.json");
  if (!existsSync(secretsFile)) return undefined;
  let authSecret: string | undefined;
  try {
    authSecret = (JSON.parse(readFileSync(secretsFile, "utf8")) as { authSecret?: string }).authSecret;
  } catch {
    authSecret = undefined;
  }
  const port = env.EMBEDDED_PG_PORT || DEFAULT_EMBEDDED_PG_PORT;
  return { databaseUrl: `postgresql://postgres:postgres@127.0.0.1:${port}/app`, authSecret };
}

/** The environment for the command: DATABASE_URL filled from the local stack when unset, and a note saying so. */
export function localDatabaseEnv(env: NodeJS.ProcessEnv, root: string): { env: NodeJS.ProcessEnv; note: string | undefined } {
  if (env.DATABASE_URL) return { env, note: undefined };
  const local = readLocalStack(localDataDir(root, env), env);
  if (!local) return { env, note: undefined };
  const where = new URL(local.databaseUrl);
  return {
    env: { ...env, DATABASE_URL: local.databaseUrl },
    note: `DATABASE_URL is unset: using pnpm start's embedded database (${where.host}${where.pathname}; pnpm start must be running)`,
  };
}
