/** The peers scenario in the report: its table and its two targets (bench/src/report.ts renders them). */
import type { Settings } from "../settings.js";
import { fmt } from "../stats.js";
import { PEER_TARGETS, type PeerResult } from "./defs.js";

type Verdict = "PASS" | "MISS" | "n/a";

export interface PeerTarget {
  name: string;
  verdict: Verdict;
  detail: string;
}

const describe = (p: PeerResult) =>
  `${fmt(p.ratio, 2)}× (rounds ${fmt(p.ratioMin, 2)}–${fmt(p.ratioMax, 2)}; ours ${fmt(p.bRps)} req/s at ${fmt(p.bCpuUs + p.bPgCpuUs)} µs CPU/req, peer ${fmt(p.aRps)} req/s at ${fmt(p.aCpuUs + p.aPgCpuUs)} µs CPU/req; CPU-derived ${fmt(p.cpuRatio, 2)}×)`;

/** The targets on ours ÷ peer req/s; "n/a" when the scenario did not run. */
export function peerTargets(peers: readonly PeerResult[] | undefined): PeerTarget[] {
  const find = (key: string) => peers?.find((p) => p.key === key);
  const session = find("peer-get-session");
  const hot = find("peer-me-hot");
  const cold = find("peer-me-cold");
  const notRun = "peers scenario not run";
  const target = (name: string, p: PeerResult | undefined, threshold: number): PeerTarget => ({
    name,
    verdict: p ? (p.ratio >= threshold ? "PASS" : "MISS") : "n/a",
    detail: p ? describe(p) : notRun,
  });
  const server = "the documented resource server (Express + jose jwtVerify)";
  return [
    target(
      `get-session with JWT issuance >= ${PEER_TARGETS.getSession} x better-auth + JWT plugin (Express, PostgreSQL)`,
      session,
      PEER_TARGETS.getSession,
    ),
    target(`GET /api/me, repeated token, >= ${PEER_TARGETS.meRepeated} x ${server}`, hot, PEER_TARGETS.meRepeated),
    target(`GET /api/me, cold tokens, >= ${PEER_TARGETS.meCold} x ${server}`, cold, PEER_TARGETS.meCold),
  ];
}

/** The peers section of the dated report. */
export function renderPeers(peers: readonly PeerResult[], settings: Settings): string[] {
  const row = (cells: string[]) => `| ${cells.join(" | ")} |`;
  const header = [
    "pair",
    "A (peer)",
    "B (ours)",
    "B/A req/s (median)",
    "per round (min–max)",
    "target",
    "A req/s",
    "B req/s",
    "A CPU µs/req (+ PostgreSQL)",
    "B CPU µs/req (+ PostgreSQL)",
    "CPU-derived B/A",
    "non-2xx",
  ];
  const cpu = (server: number, pgCpu: number) => (pgCpu > 0.5 ? `${fmt(server)} (+ ${fmt(pgCpu)})` : fmt(server));
  return [
    "",
    "### Peers (adjacent A B B A on the server core)",
    "",
    `A is the peer, B is ours; ${settings.adjacentRounds} rounds, runs of ${fmt(2 * settings.adjacentSec, 1)} s with ${settings.connections} connections; B/A = (B1 + B2) ÷ (A1 + A2) req/s. ` +
      "better-auth 1.x with `jwt()` on Express 5 and PostgreSQL (bench/src/peers/better-auth-server.ts, its own database on the same server, schema by its `getMigrations`) answers `GET /api/auth/get-session` with the JWT in `set-auth-jwt`, as identity's `POST /api/auth/get-session` does. " +
      "The documented resource server (bench/src/peers/jose-resource-server.ts) verifies every request with jose `jwtVerify` against `createRemoteJWKSet` on identity's JWKS; ours is api-1 as `pnpm start` runs it. CPU per request is the server process, plus PostgreSQL's backends where the side queries it; the CPU-derived ratio (peer ÷ ours, server + PostgreSQL) is what a dedicated core would give, a cross-check when neighbours share the core.",
    "",
    row(header),
    row(header.map(() => "---")),
    ...peers.map((p) =>
      row([
        p.label,
        p.aLabel,
        p.bLabel,
        `**${fmt(p.ratio, 2)}**`,
        `${fmt(p.ratioMin, 2)}–${fmt(p.ratioMax, 2)}`,
        p.threshold === undefined ? "–" : `>= ${fmt(p.threshold, 2)}`,
        fmt(p.aRps),
        fmt(p.bRps),
        cpu(p.aCpuUs, p.aPgCpuUs),
        cpu(p.bCpuUs, p.bPgCpuUs),
        fmt(p.cpuRatio, 2),
        String(p.non2xx),
      ]),
    ),
  ];
}
