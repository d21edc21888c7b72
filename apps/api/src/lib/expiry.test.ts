import { describe, expect, it } from "vitest";
import { createExpiryScheduler, MAX_TIMER_MS, tokenExpiry } from "./expiry.js";

/** A hand-driven clock and timer queue. */
function fakeTimers() {
  let now = 1_000_000;
  const timers: Array<{ fn: () => void; ms: number; cleared: boolean }> = [];
  return {
    timers,
    now: () => now,
    advance(ms: number) {
      now += ms;
    },
    setTimer: (fn: () => void, ms: number) => {
      const timer = { fn, ms, cleared: false };
      timers.push(timer);
      return timer;
    },
    clearTimer: (handle: unknown) => {
      (handle as { cleared: boolean }).cleared = true;
    },
    /** Runs the newest live timer. */
    runNext() {
      const timer = timers.filter((t) => !t.cleared).at(-1);
      if (!timer) throw new Error("no timer");
      timer.cleared = true;
      timer.fn();
    },
  };
}

describe("createExpiryScheduler", () => {
  it("waits out a 30-day expiry in steps a Node timer can hold, checking the clock each time", () => {
    const clock = fakeTimers();
    const scheduler = createExpiryScheduler(clock);
    let fired = 0;
    const thirtyDays = 30 * 24 * 3600 * 1000;
    scheduler.at(clock.now() + thirtyDays, () => {
      fired += 1;
    });
    clock.runNext(); // the first check
    expect(clock.timers.at(-1)?.ms).toBe(MAX_TIMER_MS);
    clock.advance(MAX_TIMER_MS);
    clock.runNext();
    expect(fired).toBe(0);
    expect(clock.timers.at(-1)?.ms).toBe(thirtyDays - MAX_TIMER_MS);
    clock.advance(thirtyDays - MAX_TIMER_MS);
    clock.runNext();
    expect(fired).toBe(1);
  });

  it("fires at once for a past instant and never after cancel", () => {
    const clock = fakeTimers();
    const scheduler = createExpiryScheduler(clock);
    let fired = 0;
    scheduler.at(clock.now() - 1, () => {
      fired += 1;
    });
    clock.runNext();
    expect(fired).toBe(1);
    const cancel = scheduler.at(clock.now() + 10, () => {
      fired += 1;
    });
    cancel();
    clock.advance(10);
    expect(clock.timers.every((t) => t.cleared)).toBe(true);
    expect(fired).toBe(1);
  });

  it("reads a token's exp in seconds", () => {
    expect(tokenExpiry({ exp: 1_700_000_000 })).toBe(1_700_000_000_000);
    expect(tokenExpiry({})).toBeUndefined();
  });
});
