import { describe, expect, it } from "vitest";
import { memoryLevels, type RssReading } from "./soak.js";

const MB = 1024 * 1024;
/** One reading every 5 s over a 60 s window starting at 0, in MiB. */
function series(mib: number[]): RssReading[] {
  return mib.map((m, i) => ({ at: i * 5000, bytes: m * MB }));
}
const level = (mib: number[]) => {
  const { early, late } = memoryLevels(series(mib), 30_000, 40_000);
  return (late - early) / MB;
};

describe("soak memory levels", () => {
  it("does not read one garbage-collection dip in the first half as growth (the CI false alarm)", () => {
    // api-1 in a CI run: 163 MiB with one dip right after a full GC, then back at its usual level.
    expect(level([165, 163, 131, 164, 166, 165, 164, 166, 165, 167, 166, 168, 168])).toBeLessThan(5);
  });

  it("does not read a GC peak in the last third as growth", () => {
    expect(level([160, 161, 160, 162, 161, 160, 161, 160, 218, 161, 160, 161, 160])).toBeLessThan(5);
  });

  it("reports a steady leak as the rise of the level", () => {
    // +2 MiB per reading: about 24 MiB a minute.
    const leak = Array.from({ length: 13 }, (_, i) => 150 + 2 * i);
    expect(level(leak)).toBeGreaterThan(12);
  });

  it("falls back to the first and last readings when a phase has none", () => {
    expect(memoryLevels([{ at: 35_000, bytes: 100 }], 30_000, 40_000)).toEqual({ early: 100, late: 100 });
    expect(memoryLevels([], 30_000, 40_000)).toEqual({ early: 0, late: 0 });
  });
});
