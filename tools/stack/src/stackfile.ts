import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { commandLine, isAlive, signal, waitGone } from "./pids.js";

/** A process of the stack, with its command line to tell a reused pid apart. */
export interface RecordedProcess {
  pid: number;
  command: string;
}

/** `<dataDir>/stack.json`: every process of a running `pnpm start`, so a later start finds them. */
export interface StackRecord {
  launcher: RecordedProcess;
  reaper?: RecordedProcess;
  services: Record<string, RecordedProcess>;
  ports: Record<string, number>;
}

/** Another launcher runs on this data directory, or its PostgreSQL serves clients of others. */
export class StackInUseError extends Error {
  readonly code = "stack_in_use";
}

export const stackFile = (dataDir: string) => path.join(dataDir, "stack.json");

/** This process as a {@link RecordedProcess}. */
export const recorded = (pid: number): RecordedProcess => ({ pid, command: commandLine(pid) });

export function readStack(dataDir: string): StackRecord | undefined {
  try {
    return JSON.parse(readFileSync(stackFile(dataDir), "utf8")) as StackRecord;
  } catch {
    return undefined;
  }
}

/** Written whole to a temporary file and renamed, so a reader never sees half a record. */
export function writeStack(dataDir: string, record: StackRecord): void {
  const file = stackFile(dataDir);
  writeFileSync(`${file}.tmp`, `${JSON.stringify(record, null, 2)}\n`);
  renameSync(`${file}.tmp`, file);
}

export function removeStack(dataDir: string): void {
  rmSync(stackFile(dataDir), { force: true });
}

/** Still the process that was recorded (alive, same command line), not a reused pid. */
const running = (p: RecordedProcess | undefined): p is RecordedProcess =>
  p !== undefined && isAlive(p.pid) && commandLine(p.pid) === p.command;

/** The pid in `<pgDir>/postmaster.pid`, if any. */
export function postmasterPid(pgDir: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(path.join(pgDir, "postmaster.pid"), "utf8").split("\n")[0] ?? "", 10);
    return pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** The embedded PostgreSQL of `dataDir` while it runs: postmaster pid and port. */
function embeddedServer(dataDir: string): { pid: number; port: number } | undefined {
  const file = path.join(dataDir, "pg", "postmaster.pid");
  if (!existsSync(file)) return undefined;
  const lines = readFileSync(file, "utf8").split("\n");
  const pid = Number.parseInt(lines[0] ?? "", 10);
  const port = Number.parseInt(lines[3] ?? "", 10);
  if (!(pid > 0) || !isAlive(pid) || !commandLine(pid).includes("postgres")) return undefined;
  return { pid, port };
}

/** Client sessions on the server other than the one asking ("application (pid)" each). */
async function clientsOf(port: number): Promise<string[] | undefined> {
  const client = new pg.Client({
    connectionString: `postgresql://postgres:postgres@127.0.0.1:${port}/postgres`,
    connectionTimeoutMillis: 3_000,
  });
  try {
    await client.connect();
    const { rows } = await client.query<{ pid: number; application_name: string; datname: string }>(
      "SELECT pid, application_name, datname FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()",
    );
    return rows.map((r) => `${r.application_name || "client"} on ${r.datname} (backend ${r.pid})`);
  } catch {
    return undefined; // not answering: nobody can be using it
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * Stops what a launcher that died without stopping (SIGKILL, power loss of its terminal) left on
 * `dataDir`: its services first (SIGTERM, SIGKILL after `graceMs`), then the embedded PostgreSQL,
 * which is refused when clients that are not the stack's still use it. A live launcher is refused.
 * Used at start (start.ts) and by the reaper (reaper.ts) the moment its launcher dies.
 */
export async function stopStaleStack(dataDir: string, log: (line: string) => void, graceMs = 7_000): Promise<void> {
  const record = readStack(dataDir);
  if (record && record.launcher.pid !== process.pid && running(record.launcher)) {
    throw new StackInUseError(
      `a stack already runs on ${dataDir} (launcher pid ${record.launcher.pid}, ports ${Object.entries(record.ports)
        .map(([k, v]) => `${k}=${v}`)
        .join(" ")}): stop it first, or use another STACK_DATA_DIR`,
    );
  }
  const services = Object.entries(record?.services ?? {}).filter(([, p]) => running(p));
  if (services.length) log(`stopping services left by a launcher that died: ${services.map(([n, p]) => `${n} (pid ${p.pid})`).join(", ")}`);
  for (const [, p] of services) signal(p.pid, "SIGTERM");
  for (const [, p] of services) if (!(await waitGone(p.pid, graceMs))) signal(p.pid, "SIGKILL");
  for (const [, p] of services) await waitGone(p.pid, 2_000);

  const server = embeddedServer(path.resolve(dataDir));
  if (server) {
    const clients = await clientsOf(server.port);
    if (clients?.length) {
      throw new StackInUseError(
        `the embedded PostgreSQL of ${dataDir} (pid ${server.pid}, port ${server.port}) still has ${clients.length} client(s) that are not this stack's: ${clients.join(", ")}; close them, then start again`,
      );
    }
    log(`stopping the embedded PostgreSQL left running (pid ${server.pid}, port ${server.port})`);
    signal(server.pid, "SIGINT"); // fast shutdown: no client is left to wait for
    if (!(await waitGone(server.pid, 10_000))) signal(server.pid, "SIGKILL");
    await waitGone(server.pid, 2_000);
  }
  removeStack(dataDir);
}
