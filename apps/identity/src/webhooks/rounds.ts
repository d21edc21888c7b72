/**
 * Background loops that run a round, then wait an interval (or less, when woken), until stopped:
 * stop() cuts every wait short and resolves once each loop's round in progress has finished.
 */
export class Rounds {
  readonly #intervalMs: number;
  readonly #loops = new Set<Promise<void>>();
  readonly #wakers = new Map<string, () => void>();
  readonly #sleepers = new Set<() => void>();
  #stopped = false;

  constructor(intervalMs: number) {
    this.#intervalMs = intervalMs;
  }

  /**
   * Runs `round` again and again: at once when it answers true (more work is waiting), else
   * after the interval or a {@link wake}. A round that throws goes to `onError` and the loop goes on.
   */
  every(name: string, round: () => Promise<unknown>, onError: (error: Error) => void): void {
    const loop = (async () => {
      while (!this.#stopped) {
        let again = false;
        try {
          again = (await round()) === true;
        } catch (error) {
          onError(error instanceof Error ? error : new Error(String(error)));
        }
        if (!again) await this.#wait(name, this.#intervalMs);
      }
    })();
    this.#loops.add(loop);
  }

  /** Ends the wait of the loop `name` now (new work for it). */
  wake(name: string): void {
    this.#wakers.get(name)?.();
  }

  /** Waits `ms`, or less when stopped. */
  sleep(ms: number): Promise<void> {
    return this.#wait(undefined, ms);
  }

  /** Stops every loop after its round in progress. */
  async stop(): Promise<void> {
    this.#stopped = true;
    for (const wake of [...this.#sleepers]) wake();
    await Promise.allSettled([...this.#loops]);
  }

  #wait(name: string | undefined, ms: number): Promise<void> {
    if (this.#stopped) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#sleepers.delete(done);
        if (name !== undefined && this.#wakers.get(name) === done) this.#wakers.delete(name);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.#sleepers.add(done);
      if (name !== undefined) this.#wakers.set(name, done);
    });
  }
}
