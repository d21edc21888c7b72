/**
 * Runs a pass over pending work now, or once more after the pass in progress when asked during
 * it: any number of triggers that arrive while a pass runs coalesce into one more pass, so a burst
 * of notifications costs two passes at most. A failing pass is handed to `onError` and the next
 * trigger retries; `run` never rejects. After {@link close} no pass starts, and a pass in progress
 * reads {@link closed} to stop early (account/user-deletion.ts, organizations/deletion.ts).
 */
export class CoalescedPasses {
  readonly #pass: (reason: string) => Promise<void>;
  readonly #onError: (reason: string, error: unknown) => void;
  #running: Promise<void> | undefined;
  #again = false;
  #closed = false;

  constructor(pass: (reason: string) => Promise<void>, onError: (reason: string, error: unknown) => void) {
    this.#pass = pass;
    this.#onError = onError;
  }

  /** True once {@link close} was called. */
  get closed(): boolean {
    return this.#closed;
  }

  /** Runs a pass, or asks the one in progress for one more; resolves when the passes end. */
  run(reason: string): Promise<void> {
    if (this.#closed) return Promise.resolve();
    if (this.#running) {
      this.#again = true;
      return this.#running;
    }
    this.#running = (async () => {
      do {
        this.#again = false;
        try {
          await this.#pass(reason);
        } catch (error) {
          this.#onError(reason, error);
        }
      } while (this.#again && !this.#closed);
    })().finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  /** Stops starting passes; resolves when the one in progress ends. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#running;
  }
}
