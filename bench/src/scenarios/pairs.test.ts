import { describe, expect, it } from "vitest";
import type { HttpResult } from "../protocol.js";
import { COLD_BOUND_RATIO, combine, PAIRS, summarizePair } from "./pairs.js";

function run(rps: number, cpuMsPerSec: number, seconds = 3): HttpResult {
  const requests = Math.round(rps * seconds);
  return {
    requests,
    durationSec: seconds,
    rps,
    p50: 1,
    p90: 1,
    p99: 1,
    non2xx: 0,
    errors: 0,
    timeouts: 0,
    statusCodes: { "200": requests },
    serverCpuMs: cpuMsPerSec * seconds,
    extraCpuMs: 0,
    loaderCpuPct: 10,
  };
}

describe("simultaneous pairs", () => {
  it("takes b/a per round, so a round on a slow machine moves both sides and not the ratio", () => {
    const pair = PAIRS.find((p) => p.key === "hot");
    if (!pair) throw new Error("no hot pair");
    const summary = summarizePair(pair, [
      [run(2000, 500), run(1900, 500)],
      [run(1000, 500), run(950, 500)], // neighbours took half the core: both halve
      [run(2100, 500), run(1932, 500)],
    ]);
    expect(summary.ratios.map((r) => Number(r.toFixed(3)))).toEqual([0.95, 0.95, 0.92]);
    expect(summary.ratio).toBeCloseTo(0.95);
    expect(summary).toMatchObject({ ratioMin: 0.92, threshold: 0.9, non2xx: 0 });
    expect(summary.aCpuUs).toBeCloseTo(250);
  });

  it("adds up the two runs of one variant in an A B B A round", () => {
    const both = combine(run(2000, 500, 2), run(1000, 500, 2));
    expect(both).toMatchObject({ requests: 6000, durationSec: 4, serverCpuMs: 2000 });
    expect(both.rps).toBe(1500);
    const pair = PAIRS.find((p) => p.key === "cold");
    if (!pair) throw new Error("no cold pair");
    // The machine slowed down during the round: A B B A still gives the undisturbed ratio 0.5.
    const a = combine(run(2000, 500), run(1000, 500));
    const b = combine(run(900, 500), run(600, 500));
    expect(summarizePair(pair, [[a, b]], "adjacent")).toMatchObject({ mode: "adjacent", ratio: 0.5 });
  });

  it("states the cold-path bound as a req/s ratio of 1 / 1.3 against /plain-verify", () => {
    expect(COLD_BOUND_RATIO).toBeCloseTo(0.769, 3);
    const bound = PAIRS.find((p) => p.key === "cold-bound");
    expect(bound?.a.path).toBe("/plain-verify");
    expect(bound?.b).toMatchObject({ path: "/jose", load: "cold" });
    expect(PAIRS.find((p) => p.key === "control")).toMatchObject({ a: { path: "/plain" }, b: { path: "/plain" } });
  });
});

describe("pair definitions", () => {
  it("never load one process with both sides at once (its event loop would serve them in turn)", () => {
    for (const pair of PAIRS) {
      const simultaneous = pair.modes === undefined || pair.modes.includes("simultaneous");
      // Reference sides run on two identical servers that swap; any other server is one process.
      if (simultaneous && pair.a.server === pair.b.server) expect(pair.a.server, pair.key).toBe("ref");
    }
    expect(PAIRS.filter((p) => p.key.startsWith("api-auth")).map((p) => p.modes)).toEqual([["adjacent"], ["adjacent"]]);
  });
});
