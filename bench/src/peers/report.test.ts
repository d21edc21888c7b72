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
  it("pass at 5x on get-session, 1.6x on /api/me with a repeated token and 0.95x with cold tokens", () => {
    expect(verdicts([result("peer-get-session", 5.1), result("peer-me-hot", 1.6), result("peer-me-cold", 0.95)])).toEqual([
      "PASS",
      "PASS",
      "PASS",
    ]);
  });

  it("miss each pair under its own target", () => {
    expect(verdicts([result("peer-get-session", 4.9), result("peer-me-hot", 1.59), result("peer-me-cold", 0.94)])).toEqual([
      "MISS",
      "MISS",
      "MISS",
    ]);
    expect(verdicts([result("peer-get-session", 5), result("peer-me-hot", 1.2), result("peer-me-cold", 2)])).toEqual([
      "PASS",
      "MISS",
      "PASS",
    ]);
  });

  it("are n/a for the pairs that did not run", () => {
    expect(verdicts(undefined)).toEqual(["n/a", "n/a", "n/a"]);
    expect(verdicts([result("peer-me-hot", 2)])).toEqual(["n/a", "PASS", "n/a"]);
  });
});

describe("peers section", () => {
  it("prints one row per pair with ours ÷ peer", () => {
    const lines = renderPeers([result("peer-get-session", 5.25)], parseSettings(["--quick"]));
    const row = lines.find((l) => l.startsWith("| get-session"));
    expect(row).toContain("**5.25**");
    expect(row).toContain(">= 5.00");
  });
});
