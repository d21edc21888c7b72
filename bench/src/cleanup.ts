/**
 * Everything the benchmark starts registers how to stop it here. The stack runs in reverse order
 * on normal completion, on failure, and on Ctrl-C / SIGTERM; a second signal exits at once (the
 * exit hooks then SIGKILL every child process still alive).
 */
type Step = { name: string; run: () => Promise<unknown> | unknown };

const steps: Step[] = [];
let running: Promise<void> | undefined;

/** Registers a cleanup step; returns a function that runs it early (and unregisters it). */
export function onCleanup(name: string, run: () => Promise<unknown> | unknown): () => Promise<void> {
  const step = { name, run };
  steps.push(step);
  return async () => {
    const i = steps.indexOf(step);
    if (i >= 0) steps.splice(i, 1);
    await run();
  };
}

/** True once cleanup started (exits of child processes are expected from then on). */
export function isCleaningUp(): boolean {
  return running !== undefined;
}

/** Runs every registered step, newest first, each bounded in time; errors are reported, not thrown. */
export function cleanupAll(log: (line: string) => void): Promise<void> {
  running ??= (async () => {
    while (steps.length > 0) {
      const step = steps.pop() as Step;
      try {
        await Promise.race([Promise.resolve(step.run()), new Promise((r) => setTimeout(r, 20_000).unref())]);
      } catch (error) {
        log(`cleanup of ${step.name} failed: ${(error as Error).message}`);
      }
    }
  })();
  return running;
}

/** Installs the signal handlers: first signal cleans up and exits 130, a second one exits now. */
export function installSignalHandlers(log: (line: string) => void): void {
  let signals = 0;
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.on(signal, () => {
      signals += 1;
      if (signals > 1) process.exit(130);
      log(`${signal}: stopping everything the benchmark started`);
      void cleanupAll(log).finally(() => process.exit(130));
    });
  }
}
