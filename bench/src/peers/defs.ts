/**
 * What the peers scenario (scenario.ts) measures: the pairs, their targets, and the one parsing
 * helper it needs. Pure: the report and the tests import it without the scenario's processes.
 */

import type { HttpResult } from "../protocol.js";
import { type PairResult, summarizePair } from "../scenarios/pairs.js";
import { median } from "../stats.js";

/** Targets on ours ÷ peer req/s (issue 22: "a lean request path"). */
export const PEER_TARGETS = { getSession: 5, meRepeated: 1.6, meCold: 0.95 } as const;

export type Server = "better-auth" | "identity" | "jose" | "api";
type Load = "hot" | "cold" | "identity-cookies" | "better-auth-cookies";
export interface PeerSide {
  label: string;
  server: Server;
  method: "GET" | "POST";
  path: string;
  load: Load;
  /** PostgreSQL works for this side: its CPU is read too. */
  pg: boolean;
}
export interface PeerPair {
  key: string;
  label: string;
  a: PeerSide;
  b: PeerSide;
  threshold: number;
}

const BETTER_AUTH_GET_SESSION: PeerSide = {
  label: "better-auth GET /api/auth/get-session (JWT plugin: set-auth-jwt)",
  server: "better-auth",
  method: "GET",
  path: "/api/auth/get-session",
  load: "better-auth-cookies",
  pg: true,
};
const IDENTITY_GET_SESSION: PeerSide = {
  label: "identity POST /api/auth/get-session (set-auth-jwt)",
  server: "identity",
  method: "POST",
  path: "/api/auth/get-session",
  load: "identity-cookies",
  pg: true,
};
const side = (server: "jose" | "api", load: "hot" | "cold"): PeerSide => ({
  label: `${server === "jose" ? "Express + jose jwtVerify" : "API"} GET /api/me, ${load === "hot" ? "repeated token" : "cold tokens"}`,
  server,
  method: "GET",
  path: "/api/me",
  load,
  pg: false,
});

export const PEER_PAIRS: readonly PeerPair[] = [
  {
    key: "peer-get-session",
    label: "get-session with JWT issuance: identity vs better-auth + JWT plugin (Express, PostgreSQL)",
    a: BETTER_AUTH_GET_SESSION,
    b: IDENTITY_GET_SESSION,
    threshold: PEER_TARGETS.getSession,
  },
  {
    key: "peer-me-hot",
    label: "GET /api/me, repeated token: the API vs the documented resource server (Express + jose jwtVerify)",
    a: side("jose", "hot"),
    b: side("api", "hot"),
    threshold: PEER_TARGETS.meRepeated,
  },
  {
    key: "peer-me-cold",
    label: "GET /api/me, cold tokens: the API vs the documented resource server (Express + jose jwtVerify)",
    a: side("jose", "cold"),
    b: side("api", "cold"),
    threshold: PEER_TARGETS.meCold,
  },
];

/** The `name=value` of a session cookie among Set-Cookie values (what a browser sends back). */
export function cookieFrom(setCookies: readonly string[], name: string): string {
  const found = setCookies.find((c) => c.startsWith(`${name}=`));
  if (!found) throw new Error(`no ${name} cookie in the answer`);
  return found.split(";")[0] as string;
}

/** A peer pair over its rounds: the pairs' summary plus PostgreSQL's share and a CPU-derived ratio. */
export interface PeerResult extends PairResult {
  /** PostgreSQL CPU µs per request (sides that query it; 0 otherwise, or when its CPU is not visible). */
  aPgCpuUs: number;
  bPgCpuUs: number;
  /**
   * Median over rounds of peer ÷ ours (server + PostgreSQL) CPU per request: the req/s ratio a
   * dedicated core would give. Robust where req/s is not: on a busy shared core a process with more
   * runnable threads (jose's WebCrypto verifications) gets a larger share of it.
   */
  cpuRatio: number;
}

const perRequest = (cpuMs: number, r: HttpResult) => (cpuMs * 1000) / Math.max(1, r.requests);

export function summarizePeer(pair: PeerPair, runs: ReadonlyArray<readonly [HttpResult, HttpResult]>): PeerResult {
  const total = (r: HttpResult) => perRequest(r.serverCpuMs + r.extraCpuMs, r);
  return {
    ...summarizePair(pair, runs, "adjacent"),
    aPgCpuUs: median(runs.map(([a]) => perRequest(a.extraCpuMs, a))),
    bPgCpuUs: median(runs.map(([, b]) => perRequest(b.extraCpuMs, b))),
    cpuRatio: median(runs.map(([a, b]) => total(a) / total(b)).filter((x) => Number.isFinite(x))),
  };
}
