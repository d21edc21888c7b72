/** Cancels a scheduled call. */
export type CancelTimer = () => void;

/** Calls a function at a wall-clock instant (a token's `exp`). */
export interface ExpiryScheduler {
  /** Calls `fire` once `now() >= atMs`; the returned function cancels it. */
  at(atMs: number, fire: () => void): CancelTimer;
}

/** Options of {@link createExpiryScheduler}. */
export interface ExpirySchedulerOptions {
  now?: () => number;
  setTimer?: (fn: () => void, ms: number) => unknown;
  clearTimer?: (handle: unknown) => void;
}

/** Longest delay a Node timer takes (a larger one fires at once). */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The default scheduler: a timer re-armed in steps of at most {@link MAX_TIMER_MS} (tokens live
 * 30 days, beyond a single timer's range) that checks `now()` again each time it wakes, so a
 * clock step or a suspended host cannot make it fire early. Timers never keep the process alive.
 */
export function createExpiryScheduler(options: ExpirySchedulerOptions = {}): ExpiryScheduler {
  const now = options.now ?? Date.now;
  const setTimer =
    options.setTimer ??
    ((fn: () => void, ms: number) => {
      const timer = setTimeout(fn, ms);
      timer.unref();
      return timer;
    });
  const clearTimer = options.clearTimer ?? ((handle: unknown) => clearTimeout(handle as NodeJS.Timeout));
  return {
    at(atMs, fire) {
      let handle: unknown;
      let cancelled = false;
      const arm = () => {
        if (cancelled) return;
        const left = atMs - now();
        if (left <= 0) {
          cancelled = true;
          fire();
          return;
        }
        handle = setTimer(arm, Math.min(left, MAX_TIMER_MS));
      };
      handle = setTimer(arm, 0);
      return () => {
        cancelled = true;
        clearTimer(handle);
      };
    },
  };
}

/** The instant (ms) a verified token's `exp` claim names, or undefined when it has none. */
export function tokenExpiry(claims: { exp?: number | undefined }): number | undefined {
  return typeof claims.exp === "number" && Number.isFinite(claims.exp) ? claims.exp * 1000 : undefined;
}
