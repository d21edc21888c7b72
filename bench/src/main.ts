#!/usr/bin/env node
/**
 * `pnpm bench`: starts the product as `pnpm start` does (embedded PostgreSQL, identity, API,
 * gateway) plus a bench-only reference server and a load-generator process, pins servers and load
 * to different cores, runs the selected scenarios (scenarios/, one file each, in the order of
 * scenarios/index.ts), prints the results and writes them to a dated file under
 * artifacts/bench/runs/ (git-ignored; docs/benchmarks.md keeps the method and the latest
 * verdicts). Everything started is stopped at the end, on failure and on Ctrl-C.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ROOT } from "@app/stack";
import { cleanupAll, installSignalHandlers } from "./cleanup.js";
import { type Cores, pinDatabase, startDatabase, startLoadWorker, startReferenceServer, startStack, startTwin } from "./infra.js";
import { canPin, pin } from "./proc.js";
import { type RunReport, renderReport } from "./report.js";
import type { Ctx } from "./scenarios/context.js";
import { SCENARIO_ORDER } from "./scenarios/index.js";
import { createTasks, identityOf, issueTokens, signUpUsers, unknownKidTokens } from "./seed.js";
import { parseSettings, type Scenario } from "./settings.js";

const HERE = path.dirname(fileURLToPath(import.meta.url));

const log = (line: string) => process.stdout.write(`bench    | ${line}\n`);

function commit(): string {
  try {
    const sha = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: ROOT, encoding: "utf8" }).trim();
    const dirty = execFileSync("git", ["status", "--porcelain", "--untracked-files=no"], { cwd: ROOT, encoding: "utf8" }).trim();
    return dirty ? `${sha} (with uncommitted changes)` : sha;
  } catch {
    return "unknown";
  }
}

async function main(): Promise<number> {
  const settings = parseSettings(process.argv.slice(2));
  installSignalHandlers(log);
  const startedAt = new Date();
  const cpus = os.cpus();
  const pinning = settings.pin && canPin(cpus.length);
  const cores: Cores = pinning ? { server: 0, load: 1 } : { server: undefined, load: undefined };
  if (pinning) pin(process.pid, cores.load);
  const report: RunReport = {
    startedAt,
    finishedAt: startedAt,
    settings,
    machine: {
      cpus: cpus.length,
      model: cpus[0]?.model.trim() ?? "unknown",
      node: process.version,
      loadBefore: os.loadavg(),
      loadAfter: [],
      pinned: pinning
        ? "servers (API, reference, identity under test, PostgreSQL) on CPU 0; load generator, orchestrator and idle services on CPU 1"
        : "off",
      commit: commit(),
    },
    validNon2xx: { count: 0, where: [] },
    failures: [],
  };
  const want = (s: Scenario) => settings.only.has(s);
  log(`scenarios: ${[...settings.only].join(", ")}${settings.quick ? " (quick)" : ""}`);

  const db = await startDatabase(log, process.env.BENCH_DATABASE_URL);
  pinDatabase(db, cores.server);
  const stack = await startStack(db, settings.logLevel, log);
  for (const p of [stack.api1, stack.api2]) pin(p.child.pid, cores.server);
  for (const p of stack.running.processes) if (!p.name.startsWith("api-")) pin(p.child.pid, cores.load);
  pinDatabase(db, cores.server);
  const identityUrl = stack.identityUrls[0] as string;
  const ref = await startReferenceServer(cores.server, {
    databaseUrl: db.url,
    jwksUrl: `${identityUrl}/api/auth/jwks`,
    issuer: stack.baseUrl,
    logLevel: settings.logLevel,
    authSecret: stack.authSecret,
  });
  const refB = want("pairs")
    ? await startReferenceServer(cores.server, {
        databaseUrl: db.url,
        jwksUrl: `${identityUrl}/api/auth/jwks`,
        issuer: stack.baseUrl,
        logLevel: settings.logLevel,
        authSecret: stack.authSecret,
      })
    : undefined;
  pinDatabase(db, cores.server);
  const worker = await startLoadWorker(cores.load);

  // Seed: users with sessions, one token per user, the token pools, one task per user.
  const runId = randomBytes(3).toString("hex");
  log(`seeding ${settings.users} users`);
  const users = await signUpUsers(identityUrl, settings.users, runId);
  const userTokens = await issueTokens(identityUrl, users, users.length);
  const hotToken = userTokens[0] as string;
  const needPools = want("auth") || want("pairs") || want("peers") || want("memory") || want("profile");
  if (needPools) {
    // The cold pool is larger than the verify cache bound, and the verifier caches a token on its
    // second sighting only, so the cold rotation always misses. The memory scenario caches tokens
    // of their own (each presented twice in a row), never met by the cold rotation.
    const extra = want("memory") ? settings.cachedTokens : 0;
    log(`issuing ${settings.coldTokens + extra} distinct tokens through get-session (identity-1 on the server core meanwhile)`);
    pin(stack.identity1.child.pid, cores.server);
    const t0 = performance.now();
    const tokens = await issueTokens(identityUrl, users, settings.coldTokens + extra);
    pin(stack.identity1.child.pid, cores.load);
    log(`issued in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    await worker.send({ cmd: "pool", name: "cold", values: tokens.slice(0, settings.coldTokens) });
    if (extra > 0) {
      const cached = tokens.slice(settings.coldTokens).flatMap((token) => [token, token]);
      await worker.send({ cmd: "pool", name: "cached", values: cached });
    }
  }
  await worker.send({ cmd: "pool", name: "cookies", values: users.map((u) => u.cookie) });
  if (want("jwks")) await worker.send({ cmd: "pool", name: "unknown", values: await unknownKidTokens(stack.baseUrl, 1000) });
  const tasks = want("streaming") ? await createTasks(stack.apiUrls[1] as string, userTokens) : [];
  const jwks = (await (await fetch(`${identityUrl}/api/auth/jwks`)).json()) as { keys: Array<{ x: string; kid: string }> };
  const kid = (JSON.parse(Buffer.from(hotToken.split(".")[0] as string, "base64url").toString()) as { kid: string }).kid;
  const jwkX = jwks.keys.find((k) => k.kid === kid)?.x ?? "";

  // The API without authentication answers as the hot token's user, so both sides send the same body.
  const apiTwin = want("pairs")
    ? await startTwin("api with an unauthenticated mode", path.join(HERE, "api-without-auth.js"), cores.server, [], {
        ...stack.apiEnv,
        BENCH_IDENTITY: JSON.stringify(identityOf(hotToken)),
      })
    : undefined;

  const ctx: Ctx = {
    settings,
    cores,
    db,
    stack,
    ref,
    ...(refB ? { refB } : {}),
    ...(apiTwin ? { apiTwin } : {}),
    worker,
    log,
    users,
    userTokens,
    tasks,
    hotToken,
    jwkX,
    validNon2xx: report.validNon2xx,
  };
  const attempt = async <T>(name: Scenario, run: () => Promise<T>): Promise<T | undefined> => {
    if (!want(name)) return undefined;
    try {
      pinDatabase(db, cores.server);
      return await run();
    } catch (error) {
      const message = `${name}: ${(error as Error).message}`;
      log(`FAILED ${message}`);
      report.failures.push(message.split("\n")[0] as string);
      return undefined;
    }
  };

  for (const scenario of SCENARIO_ORDER) await attempt(scenario.name, () => scenario.run(ctx, report));

  report.finishedAt = new Date();
  report.machine.loadAfter = os.loadavg();
  const markdown = renderReport(report);
  process.stdout.write(`\n${markdown}\n`);
  if (settings.write) {
    const file = settings.outPath ?? path.join(ROOT, "artifacts", "bench", "runs", `${startedAt.toISOString().replace(/[:.]/g, "-")}.md`);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, `# pnpm bench ${process.argv.slice(2).join(" ")}\n${markdown}`);
    log(`written to ${path.relative(ROOT, file)}`);
  }
  return report.failures.length ? 1 : 0;
}

let code = 1;
try {
  code = await main();
} catch (error) {
  log(`failed: ${(error as Error).stack ?? String(error)}`);
  code = 1;
} finally {
  log("stopping everything the benchmark started");
  await cleanupAll(log);
}
process.exit(code);
