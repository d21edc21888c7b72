import { describe, expect, it } from "vitest";
import { CoalescedPasses } from "./coalesced-passes.js";

describe("CoalescedPasses", () => {
  it("coalesces triggers during a pass into one more pass, and never rejects", async () => {
    let passes = 0;
    let release: () => void = () => undefined;
    const errors: string[] = [];
    const runs = new CoalescedPasses(
      async () => {
        passes += 1;
        if (passes === 1) await new Promise<void>((resolve) => (release = resolve));
        if (passes === 2) throw new Error("down");
      },
      (reason, error) => errors.push(`${reason}: ${(error as Error).message}`),
    );
    const first = runs.run("start");
    const again = [runs.run("notified"), runs.run("notified"), runs.run("listening")];
    release();
    await Promise.all([first, ...again]);
    expect(passes).toBe(2);
    expect(errors).toEqual(["start: down"]);
  });

  it("starts nothing once closed, and close waits for the pass in progress", async () => {
    let ended = false;
    const runs = new CoalescedPasses(
      async () => {
        await new Promise((resolve) => setImmediate(resolve));
        ended = true;
      },
      () => undefined,
    );
    const running = runs.run("start");
    await runs.close();
    expect([ended, runs.closed]).toEqual([true, true]);
    await runs.run("late");
    await running;
  });
});
