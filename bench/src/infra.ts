import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { type EmbeddedPostgresHandle, freePort, startEmbeddedPostgres } from "@app/db/embedded";
import { migrate } from "@app/db/migrate";
import { ensureDatabase, launchStack, type RunningStack, type ServiceProcess, waitHealthy } from "@app/stack";
import { isCleaningUp, onCleanup } from "./cleanup.js";
import { PgCountingProxy } from "./pg-counter.js";
import { childPids, pin } from "./proc.js";
import type { CommandBody, Reply } from "./protocol.js";

const HERE = path.dirname(fileURLToPath(import.meta.url));

/**
 * Identity requires an outgoing mail server in production (apps/identity/src/config.ts). The
 * benchmark reads no mail: unless SMTP_URL is given, a closed local port refuses every send at once.
 */
export const BENCH_SMTP_URL = process.env.SMTP_URL || "smtp://127.0.0.1:1";

/** Where things run: the server core and the load/infrastructure core (undefined: no pinning). */
export interface Cores {
  server: number | undefined;
  load: number | undefined;
}

/** Keeps the last lines of a process's output, for the error message if it dies. */
export class Tail {
  readonly #lines: string[] = [];
  push(line: string): void {
    this.#lines.push(line);
    if (this.#lines.length > 40) this.#lines.shift();
  }
  text(): string {
    return this.#lines.join("\n");
  }
}

/** Spawns `node <args>` pinned to a core with `taskset -c` (plain spawn when not pinning). */
export function spawnNode(
  cpu: number | undefined,
  args: string[],
  options: { env: NodeJS.ProcessEnv; ipc?: boolean; onLine?: (line: string) => void },
): ChildProcess {
  const command = cpu === undefined ? process.execPath : "taskset";
  const argv = cpu === undefined ? args : ["-c", String(cpu), process.execPath, ...args];
  const child = spawn(command, argv, {
    env: options.env,
    stdio: ["ignore", "pipe", "pipe", ...(options.ipc ? (["ipc"] as const) : [])],
  });
  for (const stream of [child.stdout, child.stderr]) {
    if (!stream) continue;
    stream.setEncoding("utf8");
    let buffer = "";
    stream.on("data", (chunk: string) => {
      if (!options.onLine) return;
      buffer += chunk;
      let i = buffer.indexOf("\n");
      while (i >= 0) {
        options.onLine(buffer.slice(0, i));
        buffer = buffer.slice(i + 1);
        i = buffer.indexOf("\n");
      }
    });
  }
  process.on("exit", () => child.kill("SIGKILL"));
  return child;
}

async function stopChild(child: ChildProcess, graceMs = 5_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
  await exited;
  clearTimeout(timer);
}

/** The embedded PostgreSQL of the run (throw-away data directory), with its pids for pinning and CPU. */
export interface Database {
  url: string;
  serverUrl: string;
  port: number;
  postmasterPid: number;
  /** The postmaster and every backend now alive. */
  pids(): number[];
}

export async function startDatabase(log: (line: string) => void, given: string | undefined): Promise<Database> {
  if (given) {
    const url = await ensureDatabase(given, `bench_${Date.now().toString(36)}`);
    await migrate(url);
    const port = Number(new URL(given).port || 5432);
    log(`using DATABASE_URL (database ${new URL(url).pathname.slice(1)}); its CPU is not attributed`);
    return { url, serverUrl: given, port, postmasterPid: 0, pids: () => [] };
  }
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "bench-pg-"));
  log(`starting embedded PostgreSQL in ${dataDir}`);
  let handle: EmbeddedPostgresHandle;
  try {
    handle = await startEmbeddedPostgres({ dataDir: path.join(dataDir, "pg"), port: 0, persistent: false });
  } catch (error) {
    rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
  onCleanup("embedded PostgreSQL", async () => {
    await handle.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });
  const postmasterPid = Number(readFileSync(path.join(dataDir, "pg", "postmaster.pid"), "utf8").split("\n")[0]);
  const url = await ensureDatabase(handle.url, "app");
  await migrate(url);
  return {
    url,
    serverUrl: handle.url,
    port: handle.port,
    postmasterPid,
    pids: () => (postmasterPid > 0 ? [postmasterPid, ...childPids(postmasterPid)] : []),
  };
}

/** Pins the postmaster and all its current backends (new backends inherit the postmaster's mask). */
export function pinDatabase(db: Database, cpu: number | undefined): void {
  for (const pid of db.pids()) pin(pid, cpu);
}

/** The product stack as `pnpm start` runs it, plus what the benchmark needs to observe it. */
export interface Stack {
  running: RunningStack;
  baseUrl: string;
  identity1: ServiceProcess;
  identity2: ServiceProcess;
  api1: ServiceProcess;
  api2: ServiceProcess;
  identityUrls: string[];
  apiUrls: string[];
  /** Every GET /api/auth/jwks answered by identity-1, with the time (ms) of the log line. */
  jwksFetches: number[];
  /** DB round trips of identity-2 (get-session counting) and of the API instances. */
  identityProxy: PgCountingProxy;
  apiProxy: PgCountingProxy;
  /** The environment api-1 was started with (to start a profiled twin). */
  apiEnv: NodeJS.ProcessEnv;
  authSecret: string;
  dataEncryptionKey: string;
}

/**
 * Starts identity ×2, API ×2 and the gateway with tools/stack's launchStack. identity-1 serves the
 * load (direct database connection); identity-2 goes through a counting proxy (database round
 * trips per get-session). api-1 (verify cache on) reaches the database through a counting proxy
 * too (proof of zero queries on /api/me); api-2 runs with VERIFY_CACHE=false.
 */
export async function startStack(db: Database, logLevel: string, log: (line: string) => void): Promise<Stack> {
  const identityProxy = new PgCountingProxy({ host: "127.0.0.1", port: db.port });
  const apiProxy = new PgCountingProxy({ host: "127.0.0.1", port: db.port });
  await identityProxy.listen();
  await apiProxy.listen();
  onCleanup("database proxies", async () => {
    await identityProxy.close();
    await apiProxy.close();
  });
  const authSecret = randomBytes(32).toString("base64url");
  const dataEncryptionKey = randomBytes(32).toString("base64url");
  const uploadDir = mkdtempSync(path.join(os.tmpdir(), "bench-uploads-"));
  onCleanup("upload dir", () => rmSync(uploadDir, { recursive: true, force: true }));
  const jwksFetches: number[] = [];
  const tails = new Map<string, Tail>();
  const envs = new Map<string, Record<string, string>>();
  const running = await launchStack({
    databaseUrl: db.url,
    port: 0,
    authSecret,
    dataEncryptionKey,
    identityInstances: 2,
    apiInstances: 2,
    env: {
      NODE_ENV: "production",
      LOG_LEVEL: logLevel,
      UPLOAD_DIR: uploadDir,
      // The benchmark signs in and issues tokens far above human rates, from one address.
      RATE_LIMIT_IP_MAX: "100000000",
      RATE_LIMIT_ACCOUNT_MAX: "100000000",
      MAX_SESSIONS_PER_USER: "100000",
      SMTP_URL: BENCH_SMTP_URL,
      // The scenarios sign in right after sign-up, as better-auth's peer does without verification.
      REQUIRE_EMAIL_VERIFICATION: "false",
    },
    envFor: (name) => {
      const extra: Record<string, string> = {};
      // identity-1 must log every request at info: its access log counts the JWKS fetches.
      if (name === "identity-1") extra.LOG_LEVEL = "info";
      if (name === "identity-2") extra.DATABASE_URL = identityProxy.urlFor(db.url);
      if (name === "api-1") extra.DATABASE_URL = apiProxy.urlFor(db.url);
      if (name === "api-2") extra.VERIFY_CACHE = "false";
      envs.set(name, extra);
      return extra;
    },
    onLine: (name, line) => {
      let tail = tails.get(name);
      if (!tail) {
        tail = new Tail();
        tails.set(name, tail);
      }
      if (name === "identity-1" && line.includes('"/api/auth/jwks"')) {
        try {
          jwksFetches.push(Number((JSON.parse(line) as { time?: number }).time ?? Date.now()));
        } catch {
          jwksFetches.push(Date.now());
        }
      }
      // Keep only warnings and errors (pino levels >= 40) and non-JSON lines for diagnostics.
      if (!line.startsWith("{") || /"level":(4|5|6)\d/.test(line)) tail.push(line);
    },
  });
  onCleanup("product stack", () => running.stop());
  const find = (name: string) => {
    const proc = running.processes.find((p) => p.name === name);
    if (!proc) throw new Error(`no ${name} process`);
    return proc;
  };
  const api1 = find("api-1");
  const apiPort = new URL(running.apiUrls[0] as string).port;
  const apiEnv: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_ENV: "production",
    LOG_LEVEL: logLevel,
    UPLOAD_DIR: uploadDir,
    DATABASE_URL: db.url,
    BASE_URL: running.baseUrl,
    IDENTITY_URL: running.identityUrls[0] as string,
    DATA_ENCRYPTION_KEY: dataEncryptionKey,
    PORT: apiPort,
  };
  log(`stack up: base ${running.baseUrl}, identity ${running.identityUrls.join(" ")}, api ${running.apiUrls.join(" ")}`);
  const stack: Stack = {
    running,
    baseUrl: running.baseUrl,
    identity1: find("identity-1"),
    identity2: find("identity-2"),
    api1,
    api2: find("api-2"),
    identityUrls: running.identityUrls,
    apiUrls: running.apiUrls,
    jwksFetches,
    identityProxy,
    apiProxy,
    apiEnv,
    authSecret,
    dataEncryptionKey,
  };
  void running.firstExit.then((proc) => {
    if (isCleaningUp()) return;
    log(`${proc.name} exited during the benchmark; its last warnings:\n${tails.get(proc.name)?.text() ?? "(none)"}`);
  });
  return stack;
}

/** A service process started by the benchmark itself (profiled twins). */
export interface Twin {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/**
 * Starts a service entry with extra node flags (`--cpu-prof` is refused in NODE_OPTIONS, so it
 * goes on the command line), pinned, and waits until it is healthy.
 */
export async function startTwin(
  name: string,
  entry: string,
  cpu: number | undefined,
  nodeFlags: string[],
  env: NodeJS.ProcessEnv,
): Promise<Twin> {
  const port = await freePort();
  const tail = new Tail();
  const child = spawnNode(cpu, [...nodeFlags, entry], {
    env: { ...env, PORT: String(port) },
    onLine: (line) => {
      if (!line.startsWith("{") || /"level":(4|5|6)\d/.test(line)) tail.push(line);
    },
  });
  const stop = onCleanup(name, () => stopChild(child, 15_000));
  const proc: ServiceProcess = { name, child, exited: new Promise((resolve) => child.once("exit", (code) => resolve(code))) };
  try {
    await waitHealthy(`http://127.0.0.1:${port}/healthz`, proc);
  } catch (error) {
    await stop();
    throw new Error(`${(error as Error).message}\n${tail.text()}`);
  }
  return { url: `http://127.0.0.1:${port}`, pid: child.pid as number, stop };
}

/** The bench-only reference server (see reference-server.ts). */
export interface ReferenceServer {
  url: string;
  pid: number;
}

export async function startReferenceServer(
  cpu: number | undefined,
  env: { databaseUrl: string; jwksUrl: string; issuer: string; logLevel: string; authSecret: string },
): Promise<ReferenceServer> {
  const port = await freePort();
  const tail = new Tail();
  const child = spawnNode(cpu, ["--expose-gc", path.join(HERE, "reference-server.js")], {
    env: {
      ...process.env,
      NODE_ENV: "production",
      PORT: String(port),
      DATABASE_URL: env.databaseUrl,
      JWKS_URL: env.jwksUrl,
      JWT_ISSUER: env.issuer,
      JWT_AUDIENCE: env.issuer,
      LOG_LEVEL: env.logLevel,
      // The cookie routes check session secrets with identity's HMAC key, derived from it.
      AUTH_SECRET: env.authSecret,
    },
    // Drained like the API's output (a pipe read line by line), so logging costs the same.
    onLine: (line) => {
      if (!line.startsWith("{") || /"level":(4|5|6)\d/.test(line)) tail.push(line);
    },
  });
  onCleanup("reference server", () => stopChild(child));
  const proc: ServiceProcess = {
    name: "reference",
    child,
    exited: new Promise((resolve) => child.once("exit", (code) => resolve(code))),
  };
  try {
    await waitHealthy(`http://127.0.0.1:${port}/healthz`, proc);
  } catch (error) {
    throw new Error(`${(error as Error).message}\n${tail.text()}`);
  }
  return { url: `http://127.0.0.1:${port}`, pid: child.pid as number };
}

/** The load generator process and its request/response channel. */
export interface LoadWorker {
  pid: number;
  send<T>(command: CommandBody): Promise<T>;
}

export async function startLoadWorker(cpu: number | undefined): Promise<LoadWorker> {
  const tail = new Tail();
  const child = spawnNode(cpu, [path.join(HERE, "load-worker.js")], {
    env: process.env,
    ipc: true,
    onLine: (line) => tail.push(line),
  });
  onCleanup("load generator", () => stopChild(child));
  let nextId = 1;
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  const ready = new Promise<void>((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`load generator exited (${code}) before it was ready:\n${tail.text()}`)));
    child.on("message", (reply: Reply) => {
      if (reply.id === 0) return resolve();
      const waiter = pending.get(reply.id);
      if (!waiter) return;
      pending.delete(reply.id);
      if (reply.ok) waiter.resolve(reply.result);
      else waiter.reject(new Error(`load generator: ${reply.error}`));
    });
  });
  child.on("exit", (code) => {
    for (const waiter of pending.values()) waiter.reject(new Error(`load generator exited (${code}):\n${tail.text()}`));
    pending.clear();
  });
  await ready;
  return {
    pid: child.pid as number,
    send<T>(command: CommandBody): Promise<T> {
      const id = nextId;
      nextId += 1;
      return new Promise<T>((resolve, reject) => {
        pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
        child.send({ ...command, id });
      });
    },
  };
}

/** Runs the Ed25519 micro-benchmark in its own process on the server core. */
export async function runMicro(cpu: number | undefined, token: string, x: string, iterations: number): Promise<Record<string, number>> {
  let out = "";
  const child = spawnNode(cpu, [path.join(HERE, "micro.js")], {
    env: { ...process.env, BENCH_TOKEN: token, BENCH_JWK_X: x, BENCH_ITERATIONS: String(iterations) },
    onLine: (line) => {
      out += `${line}\n`;
    },
  });
  const code = await new Promise<number | null>((resolve) => child.once("exit", (c) => resolve(c)));
  const line = out.trim().split("\n").at(-1) ?? "";
  if (code !== 0) throw new Error(`micro-benchmark failed (${code}): ${out.slice(-2000)}`);
  return JSON.parse(line) as Record<string, number>;
}
