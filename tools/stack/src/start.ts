#!/usr/bin/env node
// `pnpm start`: the whole service on one base URL (default http://localhost:3000).
import { migrate } from "@app/db/migrate";
import { openStackDatabase } from "./database.js";
import { launchStack } from "./launch.js";
import { DATA_DIR } from "./paths.js";
import { loadDevSecrets } from "./secrets.js";

const log = (line: string) => process.stdout.write(`stack    | ${line}\n`);

const port = Number(process.env.PORT ?? 3000);
const secrets = await loadDevSecrets(DATA_DIR);
const database = await openStackDatabase(DATA_DIR, log);
let stopping = false;

async function shutdown(code: number): Promise<never> {
  if (!stopping) {
    stopping = true;
    log("stopping services");
    await stack?.stop().catch(() => undefined);
    await database.embedded?.stop().catch(() => undefined);
    log("stopped");
  }
  process.exit(code);
}

let stack: Awaited<ReturnType<typeof launchStack>> | undefined;
process.once("SIGINT", () => void shutdown(0));
process.once("SIGTERM", () => void shutdown(0));

try {
  const { applied } = await migrate(database.url);
  log(applied.length ? `migrations applied: ${applied.join(", ")}` : "database schema is up to date");
  stack = await launchStack({
    databaseUrl: database.url,
    port,
    authSecret: process.env.AUTH_SECRET ?? secrets.authSecret,
    dataEncryptionKey: process.env.DATA_ENCRYPTION_KEY ?? secrets.dataEncryptionKey,
    ...(process.env.BASE_URL ? { baseUrl: process.env.BASE_URL } : {}),
    env: { UPLOAD_DIR: process.env.UPLOAD_DIR ?? `${DATA_DIR}/uploads` },
  });
} catch (error) {
  log(`failed to start: ${(error as Error).message}`);
  await shutdown(1);
}

if (stack) {
  log(`ready: ${stack.baseUrl}  (identity at ${stack.baseUrl}/api/auth/*, API at ${stack.baseUrl}/api/*; Ctrl-C stops)`);
  const exited = await stack.firstExit;
  if (!stopping) {
    log(`${exited.name} exited unexpectedly`);
    await shutdown(1);
  }
}
