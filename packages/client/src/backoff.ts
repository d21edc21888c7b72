/** How long to wait before reconnecting: capped exponential growth with jitter. */
export interface BackoffOptions {
  /** Delay before the first retry, before jitter (default 500 ms). */
  initialMs?: number;
  /** Largest delay, before jitter (default 30 s). */
  maxMs?: number;
  /** Source of randomness in [0, 1) (default `Math.random`); tests pass a fixed one. */
  random?: () => number;
}

/** Defaults of {@link BackoffOptions}. */
export const DEFAULT_BACKOFF = { initialMs: 500, maxMs: 30_000 } as const;

/**
 * The delay before retry number `attempt` (0 for the first): `min(maxMs, initialMs * 2^attempt)`,
 * then "equal jitter" (half fixed, half random) so that clients dropped together by one server
 * restart do not all come back in the same instant, while none retries sooner than half the step.
 */
export function backoffDelay(attempt: number, options: BackoffOptions = {}): number {
  const initial = Math.max(0, options.initialMs ?? DEFAULT_BACKOFF.initialMs);
  const max = Math.max(initial, options.maxMs ?? DEFAULT_BACKOFF.maxMs);
  const step = Math.min(max, initial * 2 ** Math.min(Math.max(0, attempt), 30));
  const random = options.random ?? Math.random;
  return Math.round(step / 2 + (step / 2) * Math.min(Math.max(random(), 0), 1));
}

/** Resolves after `ms`, or at once when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}
