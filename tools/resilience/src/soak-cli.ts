#!/usr/bin/env node
// `pnpm soak --seconds N [--rps R] [--workers W]`: the CI soak for any duration. Two identities
// and two APIs behind the gateway on a throw-away database (a new database on DATABASE_URL's
// server, or an embedded PostgreSQL when DATABASE_URL is unset), a steady load of authenticated
// requests, then a report; exit 1 on any non-2xx answer or a memory growth over
// SOAK_MAX_RSS_GROWTH_MB (default 50) of memory-floor rise in any process.
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { type EmbeddedPostgresHandle, startEmbeddedPostgres } from "@app/db/embedded";
import { migrate } from "@app/db/migrate";
import { ensureDatabase } from "@app/stack";
import pg from "pg";
import { describeSoak, runSoak } from "./soak.js";
import { startSoakStack } from "./soak-stack.js";

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "60" },
    rps: { type: "string", default: "150" },
    workers: { type: "string", default: "8" },
  },
});
const seconds = Number(values.seconds);
const rps = Number(values.rps);
const workers = Number(values.workers);
if (!(seconds > 0 && rps > 0 && workers > 0)) {
  process.stderr.write("usage: pnpm soak --seconds N [--rps R] [--workers W]\n");
  process.exit(2);
}
const maxGrowthMb = Number(process.env.SOAK_MAX_RSS_GROWTH_MB ?? 50);
const log = (line: string) => process.stdout.write(`soak     | ${line}\n`);

let embedded: EmbeddedPostgresHandle | undefined;
let tmp: string | undefined;
let drop: (() => Promise<void>) | undefined;
let databaseUrl: string;
if (process.env.DATABASE_URL) {
  const name = `soak_${randomBytes(4).toString("hex")}`;
  databaseUrl = await ensureDatabase(process.env.DATABASE_URL, name);
  drop = async () => {
    const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await client.connect();
    await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).finally(() => client.end());
  };
  log(`database ${name} on ${new URL(databaseUrl).host}`);
} else {
  tmp = await mkdtemp(path.join(os.tmpdir(), "soak-pg-"));
  embedded = await startEmbeddedPostgres({ dataDir: path.join(tmp, "data"), port: 0, persistent: false });
  databaseUrl = embedded.url;
  log(`embedded PostgreSQL on port ${embedded.port}`);
}

let code = 1;
try {
  await migrate(databaseUrl);
  const soak = await startSoakStack({ databaseUrl });
  try {
    log(`stack on ${soak.stack.baseUrl}: ${soak.watch.map((w) => `${w.name} (pid ${w.pid})`).join(", ")}`);
    const result = await runSoak({ baseUrl: soak.stack.baseUrl, jwts: soak.jwts, seconds, rps, workers, watch: soak.watch, log });
    process.stdout.write(`${describeSoak(result)}\n`);
    const grown = result.rss.filter((r) => r.lateGrowthMb >= maxGrowthMb);
    code = result.errors === 0 && grown.length === 0 ? 0 : 1;
    log(code === 0 ? "passed" : `FAILED: ${result.errors} errors; memory grew in ${grown.map((r) => r.name).join(", ") || "no process"}`);
  } finally {
    await soak.stack.stop();
  }
} finally {
  await drop?.().catch(() => undefined);
  await embedded?.stop().catch(() => undefined);
  if (tmp) await rm(tmp, { recursive: true, force: true }).catch(() => undefined);
}
process.exit(code);
