#!/usr/bin/env node
// `pnpm start`: the whole service on one base URL (default http://localhost:3000).
import { migrate } from "@app/db/migrate";
import { openStackDatabase, type StackDatabase } from "./database.js";
import { launchStack, type RunningStack } from "./launch.js";
import { DATA_DIR } from "./paths.js";
import { stopAll } from "./processes.js";
import { loadDevSecrets } from "./secrets.js";

const log = (line: string) => process.stdout.write(`stack    | ${line}\n`);

let database: StackDatabase | undefined;
let stack: RunningStack | undefined;
let stopping = false;
let signals = 0;

async function shutdown(code: number): Promise<void> {
  if (stopping) return;
  stopping = true;
  log("stopping services");
  // Services drain first (the gateway stops taking traffic), the database stops last.
  await stack?.stop().catch(() => undefined);
  await stopAll().catch(() => undefined);
  await database?.embedded?.stop().catch(() => undefined);
  log("stopped");
  process.exit(code);
}

for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
  process.on(signal, () => {
    signals += 1;
    if (signals > 1) {
      log("second signal: killing services now");
      process.exit(130); // the exit hook in processes.ts SIGKILLs every child
    }
    void shutdown(0);
  });
}

try {
  const port = Number(process.env.PORT ?? 3000);
  // The web app on its own origin (default http://localhost:5173); WEB_PORT=off leaves it out.
  const webPort = process.env.WEB_PORT === "off" ? undefined : Number(process.env.WEB_PORT ?? 5173);
  const secrets = await loadDevSecrets(DATA_DIR);
  database = await openStackDatabase(DATA_DIR, log);
  if (stopping) await new Promise(() => undefined); // a signal arrived meanwhile: shutdown() exits
  const { applied } = await migrate(database.url);
  log(applied.length ? `migrations applied: ${applied.join(", ")}` : "database schema is up to date");
  stack = await launchStack({
    databaseUrl: database.url,
    port,
    authSecret: process.env.AUTH_SECRET ?? secrets.authSecret,
    dataEncryptionKey: process.env.DATA_ENCRYPTION_KEY ?? secrets.dataEncryptionKey,
    ...(process.env.BASE_URL ? { baseUrl: process.env.BASE_URL } : {}),
    env: { UPLOAD_DIR: process.env.UPLOAD_DIR ?? `${DATA_DIR}/uploads` },
    ...(webPort === undefined ? {} : { web: { port: webPort } }),
  });
} catch (error) {
  if (!stopping) {
    log(`failed to start: ${(error as Error).message}`);
    await shutdown(1);
  }
}

if (stack && !stopping) {
  log(`ready: ${stack.baseUrl}  (identity at ${stack.baseUrl}/api/auth/*, API at ${stack.baseUrl}/api/*; Ctrl-C stops)`);
  if (stack.webUrl) log(`web app: ${stack.webUrl}`);
  const exited = await stack.firstExit;
  if (!stopping) {
    log(`${exited.name} exited unexpectedly`);
    await shutdown(1);
  }
}
