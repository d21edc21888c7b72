import { type ServiceProcess, stopProcess } from "./processes.js";

/** Restart policy of a crashed service (start.ts turns it on for `pnpm start`). */
export interface RestartPolicy {
  /** First delay; doubles per crash up to `maxDelayMs`. */
  firstDelayMs: number;
  maxDelayMs: number;
  /** Gives up after this many crashes within `windowMs`. */
  maxCrashes: number;
  windowMs: number;
}

export const DEFAULT_RESTART: RestartPolicy = { firstDelayMs: 500, maxDelayMs: 10_000, maxCrashes: 5, windowMs: 60_000 };

/** One service kept running: restarted with backoff when it exits on its own. */
export interface Supervised {
  readonly name: string;
  /** The process running now (replaced on restart). */
  readonly current: ServiceProcess;
  /** Resolves when the service exited and is not restarted (no policy, or it kept crashing). */
  readonly gaveUp: Promise<{ proc: ServiceProcess; reason: string }>;
  /** Replaces the running process with a fresh one (new code, `pnpm dev`); not a crash. */
  restart(): Promise<void>;
  /** Stops it for good (SIGTERM, SIGKILL after `graceMs`). */
  stop(graceMs?: number): Promise<void>;
}

export interface SuperviseOptions {
  spawn: () => ServiceProcess;
  /** Resolves once a fresh process serves (its own /healthz answer). */
  healthy: (proc: ServiceProcess) => Promise<void>;
  policy: RestartPolicy | undefined;
  /** Called with every process spawned (the first one and each restart). */
  onSpawn?: (proc: ServiceProcess) => void;
  log?: (line: string) => void;
}

/**
 * Spawns a service and watches it. Without a policy its exit resolves `gaveUp` at once (the
 * end-to-end tests treat any exit as a failure); with one, a crash is restarted after
 * 0.5 s, 1 s, 2 s … (capped), and too many crashes in the window resolve `gaveUp`.
 */
export function supervise(name: string, options: SuperviseOptions): Supervised {
  let current = options.spawn();
  options.onSpawn?.(current);
  let stopping = false;
  const crashes: number[] = [];
  let giveUp: (v: { proc: ServiceProcess; reason: string }) => void = () => undefined;
  const gaveUp = new Promise<{ proc: ServiceProcess; reason: string }>((resolve) => {
    giveUp = resolve;
  });
  const replaced = new WeakSet<ServiceProcess>();
  const respawn = async () => {
    const next = options.spawn();
    current = next;
    options.onSpawn?.(next);
    watch(next);
    await options.healthy(next).then(
      () => options.log?.(`${name} restarted and healthy`),
      // A restart that never serves is killed; its exit counts as another crash in watch().
      () => next.child.kill("SIGKILL"),
    );
  };
  const watch = (proc: ServiceProcess) => {
    void proc.exited.then(async (code) => {
      if (stopping || replaced.has(proc)) return;
      const how = code === null ? `signal ${proc.child.signalCode}` : `code ${code}`;
      const policy = options.policy;
      if (!policy) return giveUp({ proc, reason: `exited unexpectedly (${how})` });
      const now = Date.now();
      crashes.push(now);
      while (crashes.length && (crashes[0] as number) < now - policy.windowMs) crashes.shift();
      if (crashes.length >= policy.maxCrashes) {
        return giveUp({ proc, reason: `crashed ${crashes.length} times within ${policy.windowMs / 1000} s (last: ${how}); giving up` });
      }
      const delay = Math.min(policy.firstDelayMs * 2 ** (crashes.length - 1), policy.maxDelayMs);
      options.log?.(`${name} exited (${how}); restarting in ${delay / 1000} s`);
      await new Promise((r) => setTimeout(r, delay));
      if (stopping) return;
      await respawn();
    });
  };
  watch(current);
  return {
    name,
    get current() {
      return current;
    },
    gaveUp,
    async restart() {
      if (stopping) return;
      replaced.add(current);
      await stopProcess(current, 5_000);
      if (!stopping) await respawn();
    },
    async stop(graceMs = 10_000) {
      stopping = true;
      await stopProcess(current, graceMs);
    },
  };
}
