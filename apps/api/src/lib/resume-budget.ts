/** Bytes of resume catch-ups one API instance holds at once, by default (`RESUME_MAX_BYTES`). */
export const RESUME_MAX_BYTES = 16 * 1024 * 1024;
/** Longest a resume waits for room in the instance budget before it gets `resync` instead (`RESUME_MAX_WAIT_MS`). */
export const RESUME_MAX_WAIT_MS = 10_000;

/** Gives the reserved bytes back (idempotent). */
export type ReleaseResume = () => void;

interface Waiter {
  bytes: number;
  grant(release: ReleaseResume | undefined): void;
}

/**
 * The instance-wide bound on resume memory (docs/limits.md): every catch-up of a stream or socket
 * (the stored backlog replayed after `Last-Event-ID`) reserves its whole per-stream buffer budget
 * (`SSE_MAX_BUFFERED_BYTES` or `WS_MAX_BUFFERED_BYTES`) for as long as it runs, since the events it
 * has read and not yet sent, plus the bytes its socket still holds, stay under that budget
 * (events/feed.ts). So all catch-ups together hold at most `capacity` plus one event each, however
 * many clients resume at once. Room is granted first come, first served; a catch-up that gets none
 * within `maxWaitMs` is answered with `resync` (the client refetches) instead of waiting longer.
 */
export class ResumeBudget {
  readonly capacity: number;
  #used = 0;
  readonly #queue: Waiter[] = [];

  constructor(capacity: number = RESUME_MAX_BYTES) {
    if (!(capacity > 0)) throw new RangeError("the resume budget must be positive");
    this.capacity = capacity;
  }

  /** Bytes reserved by catch-ups under way. */
  get used(): number {
    return this.#used;
  }

  /** Catch-ups waiting for room. */
  get waiting(): number {
    return this.#queue.length;
  }

  /**
   * Reserves `bytes` for one catch-up: resolves with the release once there is room (a request
   * above the whole capacity runs alone), or with undefined when `maxWaitMs` passes or `signal`
   * aborts first.
   */
  acquire(bytes: number, options: { maxWaitMs: number; signal?: AbortSignal | undefined }): Promise<ReleaseResume | undefined> {
    if (options.signal?.aborted) return Promise.resolve(undefined);
    if (this.#queue.length === 0 && this.#fits(bytes)) return Promise.resolve(this.#take(bytes));
    return new Promise((resolve) => {
      const waiter: Waiter = {
        bytes,
        grant: (release) => {
          clearTimeout(timer);
          options.signal?.removeEventListener("abort", giveUp);
          resolve(release);
        },
      };
      const giveUp = () => {
        const at = this.#queue.indexOf(waiter);
        if (at >= 0) this.#queue.splice(at, 1);
        waiter.grant(undefined);
        // The head may have been the one that did not fit: the next may.
        this.#drain();
      };
      const timer = setTimeout(giveUp, options.maxWaitMs);
      timer.unref();
      options.signal?.addEventListener("abort", giveUp, { once: true });
      this.#queue.push(waiter);
    });
  }

  #fits(bytes: number): boolean {
    return this.#used === 0 || this.#used + bytes <= this.capacity;
  }

  #take(bytes: number): ReleaseResume {
    this.#used += bytes;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#used -= bytes;
      this.#drain();
    };
  }

  #drain(): void {
    for (let head = this.#queue[0]; head && this.#fits(head.bytes); head = this.#queue[0]) {
      this.#queue.shift();
      head.grant(this.#take(head.bytes));
    }
  }
}
