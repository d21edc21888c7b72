import { describe, expect, it } from "vitest";
import { parseSettings } from "../settings.js";
import { PEER_PAIRS, type PeerResult } from "./defs.js";
import { peerTargets, renderPeers } from "./report.js";

function result(key: string, ratio: number): PeerResult {
  const def = PEER_PAIRS.find((p) => p.key === key);
  if (!def) throw new Error(`no peer pair ${key}`);
  return {
    key,
    mode: "adjacent",
    label: def.label,
    aLabel: def.a.label,
    bLabel: def.b.label,
    threshold: def.threshold,
    ratios: [ratio],
    ratio,
    ratioMin: ratio,
    ratioMax: ratio,
    aRps: 1000,
    bRps: 1000 * ratio,
    aCpuUs: 100,
    bCpuUs: 100 / ratio,
    non2xx: 0,
    aPgCpuUs: 0,
    bPgCpuUs: 0,
    cpuRatio: ratio,
  };
}

const verdicts = (peers: PeerResult[] | undefined) => peerTargets(peers).map((t) => t.verdict);

describe("peer targets", () => {
  it("pass at 4x on get-session and 1.25x on /api/me, both repeated and cold", () => {
    expect(verdicts([result("peer-get-session", 4.1), result("peer-me-hot", 1.3), result("peer-me-cold", 1.26)])).toEqual(["PASS", "PASS"]);
  });

  it("miss when any measured pair is under its target", () => {
    expect(verdicts([result("peer-get-session", 3.9), result("peer-me-hot", 1.3), result("peer-me-cold", 1.24)])).toEqual(["MISS", "MISS"]);
    expect(verdicts([result("peer-get-session", 4), result("peer-me-hot", 1.2), result("peer-me-cold", 2)])).toEqual(["PASS", "MISS"]);
  });

  it("are n/a when the scenario did not run or a /api/me pair is missing", () => {
    expect(verdicts(undefined)).toEqual(["n/a", "n/a"]);
    expect(verdicts([result("peer-me-hot", 2)])).toEqual(["n/a", "n/a"]);
  });
});

describe("peers section", () => {
  it("prints one row per pair with ours ÷ peer", () => {
    const lines = renderPeers([result("peer-get-session", 4.25)], parseSettings(["--quick"]));
    const row = lines.find((l) => l.startsWith("| get-session"));
    expect(row).toContain("**4.25**");
    expect(row).toContain(">= 4.00");
  });
});
