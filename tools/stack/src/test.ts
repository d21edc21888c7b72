#!/usr/bin/env node
// `pnpm test`: runs every package's tests against a real PostgreSQL. With DATABASE_URL (or
// TEST_DATABASE_URL) set, that server is used as is; otherwise a throw-away embedded
// PostgreSQL is started for the run and removed afterwards.
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { type EmbeddedPostgresHandle, startEmbeddedPostgres } from "@app/db/embedded";
import { loadTestRunnerConfig } from "./config.js";
import { ROOT } from "./paths.js";

const log = (line: string) => process.stdout.write(`test     | ${line}\n`);
/** The runner's variables, parsed once (config.ts); an invalid one has already exited with 78. */
const config = loadTestRunnerConfig();

// The Redis suites skip without REDIS_URL, which is right on a laptop and wrong in CI: there a
// missing Redis would pass the run while the hardening tests never ran.
if (config.ci && !config.redisUrl) {
  log("CI=true but REDIS_URL is not set: the Redis suites would be skipped. Set REDIS_URL (e.g. redis://127.0.0.1:6379).");
  process.exit(1);
}
const given = config.databaseUrl;
let embedded: EmbeddedPostgresHandle | undefined;
let tmp: string | undefined;

async function cleanup(): Promise<void> {
  await embedded?.stop().catch(() => undefined);
  if (tmp) await rm(tmp, { recursive: true, force: true }).catch(() => undefined);
}

let url = given;
if (!url) {
  tmp = await mkdtemp(path.join(os.tmpdir(), "auth-test-pg-"));
  embedded = await startEmbeddedPostgres({ dataDir: path.join(tmp, "data"), port: 0, persistent: false });
  url = embedded.url;
  log(`embedded PostgreSQL on port ${embedded.port} (throw-away)`);
} else {
  log(`using PostgreSQL at ${new URL(url).host}`);
}

await rm(path.join(ROOT, "artifacts", "test-results.json"), { force: true });
const vitest = spawn("pnpm", ["exec", "vitest", "run", ...process.argv.slice(2)], {
  cwd: ROOT,
  stdio: "inherit",
  env: { ...process.env, TEST_DATABASE_URL: url },
});
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => vitest.kill(signal));
const code = await new Promise<number>((resolve) => vitest.once("exit", (c) => resolve(c ?? 1)));
await cleanup();

const report = path.join(ROOT, "artifacts", "test-results.json");
if (existsSync(report)) {
  const r = JSON.parse(readFileSync(report, "utf8")) as { numPassedTests: number; numFailedTests: number; numPendingTests: number };
  // The plain closing line CI reads.
  process.stdout.write(`${r.numPassedTests} passed, ${r.numFailedTests} failed, ${r.numPendingTests} skipped\n`);
}
process.exit(code);
