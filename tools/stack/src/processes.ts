import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { WATCH_PARENT } from "./paths.js";

/** A child service process with a name, for prefixed output and orderly shutdown. */
export interface ServiceProcess {
  name: string;
  child: ChildProcess;
  /** Resolves with the exit code once the process has exited. */
  exited: Promise<number | null>;
  /**
   * Per-launch nonce passed as STACK_INSTANCE_ID and echoed by the services' `/healthz`, so a
   * health answer from another process on the same port is never taken for this one's.
   */
  instance?: string;
}

/** Options of {@link startProcess}. */
export interface StartOptions {
  name: string;
  entry: string;
  env: NodeJS.ProcessEnv;
  /** Arguments after the entry (default none). */
  args?: string[];
  /** Working directory (default this process's). */
  cwd?: string;
  /** Receives each output line (default: written to this process's stdout, prefixed). */
  onLine?: (name: string, line: string) => void;
}

function pipeLines(stream: NodeJS.ReadableStream | null, emit: (line: string) => void): void {
  if (!stream) return;
  let buffer = "";
  stream.setEncoding("utf8");
  stream.on("data", (chunk: string) => {
    buffer += chunk;
    let index = buffer.indexOf("\n");
    while (index >= 0) {
      emit(buffer.slice(0, index));
      buffer = buffer.slice(index + 1);
      index = buffer.indexOf("\n");
    }
  });
  stream.on("end", () => buffer && emit(buffer));
}

/** Every child started here that has not exited yet. */
const live = new Set<ServiceProcess>();

// Last resort: whatever way this process ends, no child outlives it.
process.on("exit", () => {
  for (const proc of live) proc.child.kill("SIGKILL");
});

/** Stops every live child (SIGTERM, then SIGKILL after `graceMs`). */
export async function stopAll(graceMs = 10_000): Promise<void> {
  await Promise.all([...live].map((p) => stopProcess(p, graceMs)));
}

/**
 * Spawns `node <entry>` with the given environment, in its own process group: a Ctrl-C in the
 * terminal reaches only the launcher, which stops the services in order (launch.ts).
 */
export function startProcess(options: StartOptions): ServiceProcess {
  const instance = randomUUID();
  const child = spawn(process.execPath, ["--import", WATCH_PARENT, options.entry, ...(options.args ?? [])], {
    ...(options.cwd ? { cwd: options.cwd } : {}),
    env: { ...options.env, STACK_INSTANCE_ID: instance },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  const emit = options.onLine ?? ((name, line) => process.stdout.write(`${name.padEnd(8)} | ${line}\n`));
  pipeLines(child.stdout, (line) => emit(options.name, line));
  pipeLines(child.stderr, (line) => emit(options.name, line));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const proc = { name: options.name, child, exited, instance };
  live.add(proc);
  void exited.then(() => live.delete(proc));
  return proc;
}

/**
 * Polls `url` until it answers 2xx (with the process's own `instance`, when it has one), the
 * process exits, or the timeout passes.
 */
export async function waitHealthy(url: string, proc: ServiceProcess, timeoutMs = 30_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  let exited = false;
  void proc.exited.then(() => {
    exited = true;
  });
  while (Date.now() < until) {
    if (exited) throw new Error(`${proc.name} exited before it became healthy`);
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(1_000) });
      if (res.ok && (proc.instance === undefined || (await answeredBy(res)) === proc.instance)) return;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${proc.name} did not become healthy at ${url} within ${timeoutMs} ms`);
}

async function answeredBy(res: Response): Promise<unknown> {
  try {
    return ((await res.json()) as { instance?: unknown }).instance;
  } catch {
    return undefined;
  }
}

/** SIGTERM, then SIGKILL after `graceMs` if it is still running. */
export async function stopProcess(proc: ServiceProcess, graceMs = 10_000): Promise<void> {
  if (proc.child.exitCode !== null || proc.child.signalCode !== null) return;
  proc.child.kill("SIGTERM");
  const timer = setTimeout(() => proc.child.kill("SIGKILL"), graceMs);
  await proc.exited;
  clearTimeout(timer);
}
