import { describe, expect, it } from "vitest";
import { ResumeBudget } from "./resume-budget.js";

const long = { maxWaitMs: 60_000 };

describe("ResumeBudget", () => {
  it("grants room first come, first served, and never more than its capacity at once", async () => {
    const budget = new ResumeBudget(100);
    const a = await budget.acquire(60, long);
    const order: string[] = [];
    const b = budget.acquire(60, long).then((release) => {
      order.push("b");
      return release;
    });
    const c = budget.acquire(30, long).then((release) => {
      order.push("c");
      return release;
    });
    await Promise.resolve();
    // c would fit beside a, but b came first.
    expect([budget.used, budget.waiting, order]).toEqual([60, 2, []]);
    a?.();
    const [releaseB, releaseC] = await Promise.all([b, c]);
    expect(order).toEqual(["b", "c"]);
    expect(budget.used).toBe(90);
    releaseB?.();
    releaseB?.();
    releaseC?.();
    expect(budget.used).toBe(0);
  });

  it("runs a request larger than the whole capacity alone", async () => {
    const budget = new ResumeBudget(10);
    const big = await budget.acquire(50, long);
    expect(budget.used).toBe(50);
    const next = budget.acquire(1, long);
    big?.();
    expect(await next).toBeTypeOf("function");
  });

  it("answers undefined after maxWaitMs or on abort, and lets the next waiter in", async () => {
    const budget = new ResumeBudget(10);
    const held = await budget.acquire(10, long);
    expect(await budget.acquire(5, { maxWaitMs: 20 })).toBeUndefined();
    const left = new AbortController();
    const aborted = budget.acquire(5, { maxWaitMs: 60_000, signal: left.signal });
    const after = budget.acquire(5, long);
    left.abort();
    expect(await aborted).toBeUndefined();
    held?.();
    expect(await after).toBeTypeOf("function");
    expect(budget.waiting).toBe(0);
  });
});
