import { describe, expect, it } from "vitest";
import { type RunReport, targets } from "./report.js";
import { PAIRS, type PairResult } from "./scenarios/pairs.js";
import { parseSettings } from "./settings.js";

function pair(key: string, ratio: number): PairResult {
  const def = PAIRS.find((p) => p.key === key);
  if (!def) throw new Error(`no pair ${key}`);
  return {
    key,
    mode: "adjacent",
    label: def.label,
    aLabel: def.a.label,
    bLabel: def.b.label,
    ...(def.threshold === undefined ? {} : { threshold: def.threshold }),
    ratios: [ratio],
    ratio,
    ratioMin: ratio,
    ratioMax: ratio,
    aRps: 1000,
    bRps: 1000 * ratio,
    aCpuUs: 100,
    bCpuUs: 100 / ratio,
    non2xx: 0,
  };
}

function report(pairs: PairResult[]): RunReport {
  const machine = { cpus: 2, model: "test", node: "v20", loadBefore: [0, 0, 0], loadAfter: [0, 0, 0], pinned: "", commit: "" };
  return {
    startedAt: new Date(0),
    finishedAt: new Date(0),
    settings: parseSettings([]),
    machine,
    pairs,
    validNon2xx: { count: 0, where: [] },
    failures: [],
  };
}

const verdictOf = (r: RunReport, name: RegExp) => targets(r).find((t) => name.test(t.name))?.verdict;

describe("ratio targets", () => {
  it("pass only when the reference pair and the API pair both reach the threshold", () => {
    const base = [pair("control", 1), pair("cold", 0.5), pair("api-auth-cold", 0.5)];
    expect(verdictOf(report([...base, pair("hot", 0.95), pair("api-auth-hot", 0.93)]), /repeated token/)).toBe("PASS");
    expect(verdictOf(report([...base, pair("hot", 0.95), pair("api-auth-hot", 0.85)]), /repeated token/)).toBe("MISS");
    expect(verdictOf(report([...base, pair("hot", 0.85), pair("api-auth-hot", 0.95)]), /repeated token/)).toBe("MISS");
    expect(verdictOf(report([pair("hot", 0.95), pair("cold", 0.5), pair("api-auth-cold", 0.44)]), /cold tokens/)).toBe("MISS");
  });

  it("is decided by whichever of the two ran", () => {
    expect(verdictOf(report([pair("api-auth-hot", 0.91)]), /repeated token/)).toBe("PASS");
    expect(verdictOf(report([pair("hot", 0.89)]), /repeated token/)).toBe("MISS");
    expect(verdictOf(report([]), /repeated token/)).toBe("n/a");
  });
});
