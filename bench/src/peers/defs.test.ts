import { describe, expect, it } from "vitest";
import { cookieFrom, PEER_PAIRS, PEER_TARGETS, summarizePeer } from "./defs.js";

describe("cookieFrom", () => {
  it("returns the name=value a browser sends back, without the attributes", () => {
    const setCookies = ["other=1; Path=/", "better-auth.session_token=abc.def%3D; Max-Age=604800; Path=/; HttpOnly; SameSite=Lax"];
    expect(cookieFrom(setCookies, "better-auth.session_token")).toBe("better-auth.session_token=abc.def%3D");
  });

  it("does not take a cookie whose name only ends like the one asked for", () => {
    expect(() => cookieFrom(["x-better-auth.session_token=1"], "better-auth.session_token")).toThrow(/no better-auth.session_token cookie/);
  });
});

describe("peer pairs", () => {
  it("put the peer on side A and ours on side B, so B/A is ours ÷ peer", () => {
    for (const pair of PEER_PAIRS) {
      expect(["better-auth", "jose"]).toContain(pair.a.server);
      expect(["identity", "api"]).toContain(pair.b.server);
    }
  });

  it("compare like for like: both get-session sides issue a JWT from a cookie session, both /api/me sides get the same tokens", () => {
    const session = PEER_PAIRS.find((p) => p.key === "peer-get-session");
    expect(session?.a.path).toBe("/api/auth/get-session");
    expect(session?.b.path).toBe("/api/auth/get-session");
    expect(session?.threshold).toBe(PEER_TARGETS.getSession);
    for (const [key, threshold] of [
      ["peer-me-hot", PEER_TARGETS.meRepeated],
      ["peer-me-cold", PEER_TARGETS.meCold],
    ] as const) {
      const pair = PEER_PAIRS.find((p) => p.key === key);
      expect(pair?.a.load).toBe(pair?.b.load);
      expect(pair?.threshold).toBe(threshold);
    }
  });
});

describe("summarizePeer", () => {
  const run = (rps: number, serverCpuMs: number, pgCpuMs: number) => ({
    requests: rps * 2,
    durationSec: 2,
    rps,
    p50: 1,
    p90: 1,
    p99: 1,
    non2xx: 0,
    errors: 0,
    timeouts: 0,
    statusCodes: { "200": rps * 2 },
    serverCpuMs,
    extraCpuMs: pgCpuMs,
    loaderCpuPct: 10,
  });

  it("adds PostgreSQL's CPU per request and the CPU-derived ratio, peer ÷ ours", () => {
    const pair = PEER_PAIRS.find((p) => p.key === "peer-get-session");
    if (!pair) throw new Error("no get-session pair");
    // Peer: 100 req/s, 2000 ms server + 1000 ms PostgreSQL over 200 requests = 15,000 µs/req.
    // Ours: 400 req/s, 1200 ms server + 400 ms PostgreSQL over 800 requests = 2,000 µs/req.
    const summary = summarizePeer(pair, [[run(100, 2000, 1000), run(400, 1200, 400)]]);
    expect(summary.ratio).toBe(4);
    expect(summary.aPgCpuUs).toBe(5000);
    expect(summary.bPgCpuUs).toBe(500);
    expect(summary.cpuRatio).toBe(7.5);
    expect(summary.mode).toBe("adjacent");
  });
});
