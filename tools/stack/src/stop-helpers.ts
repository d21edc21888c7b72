import { type ChildProcess, spawn } from "node:child_process";
import { randomInt } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { freePort } from "@app/db/embedded";
import { ROOT } from "./paths.js";
import { isAlive, parentOf } from "./pids.js";
import { isPortFree } from "./ports.js";
import { readStack } from "./stackfile.js";

/** `pnpm start` run by a test: its output, its exit, and what its stack file recorded. */
export interface StartedStack {
  pnpm: ChildProcess;
  output: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  ports: number[];
  /** Every pid of the stack: runner (bin/start.mjs), launcher, reaper, services, embedded PostgreSQL. */
  pids: () => number[];
  launcher: () => number;
}

/** Every `pnpm` a test spawned, ready or not (a test that timed out still has its stack). */
const spawned = new Set<ChildProcess>();

/** Stops every stack a test started (SIGTERM to its process group); for `afterAll`. */
export async function stopSpawned(): Promise<void> {
  for (const pnpm of spawned) {
    if (pnpm.exitCode !== null || pnpm.signalCode !== null || !pnpm.pid) continue;
    try {
      process.kill(-pnpm.pid, "SIGTERM");
    } catch {
      // gone
    }
  }
  await within(10_000, () => [...spawned].every((p) => p.exitCode !== null || p.signalCode !== null));
}

/** Sends `signal` to `pid`, if it is still there. */
export function kill(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // gone
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `check` until it is true; false after `ms`. */
export async function within(ms: number, check: () => boolean | Promise<boolean>): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (await check()) return true;
    await sleep(100);
  }
  return check();
}

/** Where the kernel's ephemeral ports begin (Linux; the usual 32768 elsewhere). */
function ephemeralPortsStart(): number {
  try {
    return Number.parseInt(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8"), 10) || 32_768;
  } catch {
    return 32_768;
  }
}

const LOWEST_STACK_PORT = 20_000;

/**
 * A free port for a stack a test starts by number (PORT, EMBEDDED_PG_PORT, WEB_PORT). A port
 * from listen(0) (freePort) lies in the kernel's ephemeral range and is closed again before
 * `pnpm start` binds it: meanwhile the kernel may give it to any other process's listen(0) or
 * outgoing connection (the suite's files run in parallel), and the start fails on a port taken
 * by someone else. Below that range the kernel never hands a port out by itself, so only a
 * program asking for that number can take it.
 */
export async function stackPort(): Promise<number> {
  const end = ephemeralPortsStart();
  if (end - LOWEST_STACK_PORT < 1_000) return freePort();
  for (;;) {
    const port = randomInt(LOWEST_STACK_PORT, end);
    if (await isPortFree(port)) return port;
  }
}

/**
 * Runs `pnpm start` (or `script`) literally (the root script) on free ports and `dataDir`, in its own process
 * group (like a terminal's foreground job), and waits for `ready:`. The build is the caller's:
 * STACK_BUILD=off.
 */
export async function startStack(dataDir: string, extra: Record<string, string> = {}, script = "start"): Promise<StartedStack> {
  const ports = { PORT: await stackPort(), EMBEDDED_PG_PORT: await stackPort() };
  const env: NodeJS.ProcessEnv = { ...process.env, ...Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])) };
  Object.assign(env, { WEB_PORT: "off", STACK_DATA_DIR: dataDir, STACK_BUILD: "off", ...extra });
  // A developer's machine: no database URL, and none of the variables vitest injects (BASE_URL=/ ...).
  for (const name of ["DATABASE_URL", "TEST_DATABASE_URL", "BASE_URL", "MODE", "DEV", "PROD", "SSR"]) delete env[name];
  const pnpm = spawn("pnpm", [script], { cwd: ROOT, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  spawned.add(pnpm);
  let output = "";
  for (const stream of [pnpm.stdout, pnpm.stderr]) stream.on("data", (d: Buffer) => (output += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    pnpm.once("exit", (code, signal) => resolve({ code, signal })),
  );
  await within(60_000, () => output.includes("ready: ") || pnpm.exitCode !== null);
  if (!output.includes("ready: ")) throw new Error(`pnpm start did not get ready:\n${output}`);
  const record = readStack(dataDir);
  if (!record) throw new Error("no stack.json");
  const postgres = Number.parseInt(readFileSync(path.join(dataDir, "pg", "postmaster.pid"), "utf8").split("\n")[0] ?? "", 10);
  // bin/start.mjs: the process pnpm runs, parent of the launcher.
  const runner = parentOf(record.launcher.pid)?.ppid ?? 0;
  const pids = [
    runner,
    record.launcher.pid,
    ...(record.reaper ? [record.reaper.pid] : []),
    ...Object.values(record.services).map((s) => s.pid),
    postgres,
  ];
  return {
    pnpm,
    output: () => output,
    exited,
    ports: Object.values(ports),
    pids: () => pids,
    launcher: () => record.launcher.pid,
  };
}

/** True once no pid of the stack is alive and every port is free. */
export async function allGone(stack: StartedStack): Promise<boolean> {
  if (stack.pids().some(isAlive)) return false;
  for (const port of stack.ports) if (!(await isPortFree(port))) return false;
  return true;
}
