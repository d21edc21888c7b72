/**
 * The "pairs" scenario: the targets' ratios, measured two ways that both resist this class of
 * machine's drift (a VM with neighbours: the same server code costs anywhere from about 180 to 320
 * µs per request from one minute to the next, so two variants measured a minute apart differ by
 * more than the effects the targets are about).
 *
 * - **adjacent** (decides the targets): one server on its dedicated core, as the targets define it;
 *   A and B alternate in short runs in A B B A order and each round's ratio is (B1 + B2) ÷ (A1 + A2),
 *   which cancels a drift that is linear over the few seconds of the round.
 * - **simultaneous** (cross-check): two identical reference servers share the server core and are
 *   loaded at the same time, swapping sides every round; the machine's drift hits both alike.
 *   Co-scheduling two processes on one core costs each of them (context switches between
 *   processes), so this ratio is not exactly the dedicated-core one.
 *
 * An A/A control pair (/plain against itself) shows each method's own error.
 */

import type { Twin } from "../infra.js";
import type { HttpResult, HttpSpec } from "../protocol.js";
import { median, rotate, spread } from "../stats.js";
import type { Ctx } from "./context.js";

/** How a pair was measured (see the module comment). */
export type PairMode = "adjacent" | "simultaneous";

type Side = { label: string; server: "ref" | "api"; path: string; load: "none" | "hot" | "cold" | "cookie" };

interface PairDef {
  key: string;
  label: string;
  a: Side;
  b: Side;
  /** Which target this pair decides, with its threshold on b/a. */
  threshold?: number;
  /** Only in these modes (default: both). */
  modes?: readonly PairMode[];
}

/** One pair over every round: b/a per round, and the medians of each side. */
export interface PairResult {
  key: string;
  mode: PairMode;
  label: string;
  aLabel: string;
  bLabel: string;
  threshold?: number;
  ratios: number[];
  ratio: number;
  ratioMin: number;
  ratioMax: number;
  aRps: number;
  bRps: number;
  aCpuUs: number;
  bCpuUs: number;
  non2xx: number;
}

const PLAIN: Side = { label: "/plain", server: "ref", path: "/plain", load: "none" };
const PLAIN_VERIFY: Side = { label: "/plain-verify", server: "ref", path: "/plain-verify", load: "none" };
const JOSE_HOT: Side = { label: "/jose, repeated token", server: "ref", path: "/jose", load: "hot" };
const JOSE_COLD: Side = { label: "/jose, cold tokens", server: "ref", path: "/jose", load: "cold" };

const API_NOAUTH: Side = { label: "API /api/me, no authentication", server: "api", path: "/api/me", load: "none" };
const API_HOT: Side = { label: "API /api/me, repeated token", server: "api", path: "/api/me", load: "hot" };
const API_COLD: Side = { label: "API /api/me, cold tokens", server: "api", path: "/api/me", load: "cold" };

/** Cold-path bound of the issue: CPU ≤ 1.3 × (baseline + raw verify), i.e. req/s ratio ≥ 1 / 1.3. */
export const COLD_BOUND_RATIO = 1 / 1.3;

export const PAIRS: readonly PairDef[] = [
  { key: "control", label: "A/A control: /plain on both servers", a: PLAIN, b: PLAIN },
  { key: "hot", label: "repeated token: /jose vs /plain", a: PLAIN, b: JOSE_HOT, threshold: 0.9 },
  { key: "cold", label: "cold tokens: /jose vs /plain", a: PLAIN, b: JOSE_COLD, threshold: 0.45 },
  // What the signature alone allows: the ceiling of the cold ratio on this machine.
  { key: "verify-ceiling", label: "ceiling of the cold ratio: /plain-verify vs /plain", a: PLAIN, b: PLAIN_VERIFY },
  {
    key: "cold-bound",
    label: "cold path vs Express + raw Ed25519 verify: /jose cold vs /plain-verify",
    a: PLAIN_VERIFY,
    b: JOSE_COLD,
    threshold: COLD_BOUND_RATIO,
  },
  // The rejected alternative, adjacent only: PostgreSQL runs on the same core and its CPU is part of
  // the cookie's cost, which a simultaneous pair would split unfairly.
  {
    key: "cookie-pg",
    label: "cookie + PostgreSQL (one raw SQL query) vs /plain",
    a: PLAIN,
    b: { label: "/cookie-pg", server: "ref", path: "/cookie-pg", load: "cookie" },
    modes: ["adjacent"],
  },
  // The issue's own definition, on the product: GET /api/me of the API with a valid bearer vs the
  // same API and handler without authentication, both served by one process (api-without-auth.ts:
  // the API as built by server.ts, answering a request without Authorization as a constant
  // identity and verifying the others as the API does). Adjacent only: loaded at the same time, one
  // event loop would serve both sides' connections in turn, whatever each request costs.
  {
    key: "api-auth-hot",
    label: "API GET /api/me, repeated token, vs the same API without authentication",
    a: API_NOAUTH,
    b: API_HOT,
    threshold: 0.9,
    modes: ["adjacent"],
  },
  {
    key: "api-auth-cold",
    label: "API GET /api/me, cold tokens, vs the same API without authentication",
    a: API_NOAUTH,
    b: API_COLD,
    threshold: 0.45,
    modes: ["adjacent"],
  },
  // What the API's own middleware (security headers, CORS, routing, entry) costs over the bare reference.
  { key: "api-overhead", label: "the API's own cost: API /api/me without authentication vs reference /plain", a: PLAIN, b: API_NOAUTH },
];

function specFor(ctx: Ctx, side: Side, refIndex: 0 | 1, warmupSec: number): HttpSpec {
  const refs = [ctx.ref, ctx.refB ?? ctx.ref];
  const ref = refs[refIndex] as (typeof refs)[number];
  if (side.server === "api" && !ctx.apiTwin) throw new Error("the pairs scenario needs the bench's API instance");
  const server = side.server === "ref" ? ref : (ctx.apiTwin as Twin);
  const base = server.url;
  const pid = server.pid;
  const cursor = side.server === "ref" ? `pair-ref-${refIndex}` : `pair-${side.server}`;
  return {
    url: `${base}${side.path}`,
    connections: Math.max(1, Math.floor(ctx.settings.connections / 2)),
    durationSec: ctx.settings.pairDurationSec,
    warmupSec,
    serverPids: [pid],
    ...(side.load === "hot" ? { headers: { authorization: `Bearer ${ctx.hotToken}` } } : {}),
    ...(side.load === "cold" ? { rotate: { pool: "cold", header: "authorization", prefix: "Bearer ", cursor } } : {}),
    ...(side.load === "cookie" ? { rotate: { pool: "cookies", header: "cookie", prefix: "", cursor: `${cursor}-cookie` } } : {}),
  };
}

function countInvalid(ctx: Ctx, pair: PairDef, side: Side, result: HttpResult): void {
  const bad = result.non2xx + result.errors + result.timeouts;
  if (bad > 0 && side.load !== "none") {
    ctx.validNon2xx.count += bad;
    ctx.validNon2xx.where.push(`pairs ${pair.key} ${side.label}: ${bad} (${JSON.stringify(result.statusCodes)})`);
  }
}

/** Two runs of one variant as one: requests, time and CPU added up. */
export function combine(x: HttpResult, y: HttpResult): HttpResult {
  const requests = x.requests + y.requests;
  const durationSec = x.durationSec + y.durationSec;
  return {
    ...x,
    requests,
    durationSec,
    rps: requests / durationSec,
    p50: Math.max(x.p50, y.p50),
    p90: Math.max(x.p90, y.p90),
    p99: Math.max(x.p99, y.p99),
    non2xx: x.non2xx + y.non2xx,
    errors: x.errors + y.errors,
    timeouts: x.timeouts + y.timeouts,
    serverCpuMs: x.serverCpuMs + y.serverCpuMs,
    extraCpuMs: x.extraCpuMs + y.extraCpuMs,
    loaderCpuPct: (x.loaderCpuPct + y.loaderCpuPct) / 2,
  };
}

/** Adjacent mode: A B B A on one server per side, each run `adjacentSec`, full connections. */
const pairsIn = (ctx: Ctx, mode: PairMode) =>
  PAIRS.filter((p) => (p.modes === undefined || p.modes.includes(mode)) && (ctx.settings.pairKeys?.has(p.key) ?? true));

async function adjacentRounds(ctx: Ctx): Promise<PairResult[]> {
  const pairs = pairsIn(ctx, "adjacent");
  const runs = new Map<string, Array<[HttpResult, HttpResult]>>(pairs.map((p) => [p.key, []]));
  const one = (side: Side) =>
    ctx.worker.send<HttpResult>({
      cmd: "http",
      spec: {
        ...specFor(ctx, side, 0, 0),
        connections: ctx.settings.connections,
        durationSec: ctx.settings.adjacentSec,
      },
    });
  for (let round = 0; round < ctx.settings.adjacentRounds; round += 1) {
    for (const pair of rotate(pairs, round)) {
      const a1 = await one(pair.a);
      const b1 = await one(pair.b);
      const b2 = await one(pair.b);
      const a2 = await one(pair.a);
      for (const r of [a1, a2]) countInvalid(ctx, pair, pair.a, r);
      for (const r of [b1, b2]) countInvalid(ctx, pair, pair.b, r);
      const a = combine(a1, a2);
      const b = combine(b1, b2);
      (runs.get(pair.key) as Array<[HttpResult, HttpResult]>).push([a, b]);
      ctx.log(
        `pairs adjacent ${round + 1}/${ctx.settings.adjacentRounds} ${pair.key.padEnd(14)} a ${Math.round(a.rps)} req/s, b ${Math.round(b.rps)} req/s, b/a ${(b.rps / a.rps).toFixed(3)}`,
      );
    }
  }
  return pairs.map((pair) => summarizePair(pair, runs.get(pair.key) ?? [], "adjacent"));
}

/** Simultaneous mode: both servers loaded at once, swapping sides every round. */
async function simultaneousRounds(ctx: Ctx): Promise<PairResult[]> {
  const pairs = pairsIn(ctx, "simultaneous");
  const runs = new Map<string, Array<[HttpResult, HttpResult]>>(pairs.map((p) => [p.key, []]));
  for (let round = 0; round < ctx.settings.pairRounds; round += 1) {
    for (const pair of rotate(pairs, round)) {
      // The two reference servers swap variants every round; an API side always runs on api-1.
      const aRef: 0 | 1 = round % 2 === 0 ? 0 : 1;
      const bRef: 0 | 1 = aRef === 0 ? 1 : 0;
      const [a, b] = await ctx.worker.send<[HttpResult, HttpResult]>({
        cmd: "http-pair",
        a: specFor(ctx, pair.a, aRef, 0),
        b: specFor(ctx, pair.b, bRef, 0),
      });
      (runs.get(pair.key) as Array<[HttpResult, HttpResult]>).push([a, b]);
      countInvalid(ctx, pair, pair.a, a);
      countInvalid(ctx, pair, pair.b, b);
      ctx.log(
        `pairs simultaneous ${round + 1}/${ctx.settings.pairRounds} ${pair.key.padEnd(14)} a ${Math.round(a.rps)} req/s, b ${Math.round(b.rps)} req/s, b/a ${(b.rps / a.rps).toFixed(3)}`,
      );
    }
  }
  return pairs.map((pair) => summarizePair(pair, runs.get(pair.key) ?? [], "simultaneous"));
}

/** Warms every variant up on both reference servers, then runs both modes. */
export async function pairsScenario(ctx: Ctx): Promise<PairResult[]> {
  if (!ctx.refB) throw new Error("the pairs scenario needs the second reference server");
  const unknown = [...(ctx.settings.pairKeys ?? [])].filter((key) => !PAIRS.some((p) => p.key === key));
  if (unknown.length) throw new Error(`unknown pair ${unknown.join(", ")}; pairs: ${PAIRS.map((p) => p.key).join(", ")}`);
  // Every variant on both servers (they swap sides), so no measured run meets code the JIT has not
  // optimized yet.
  const warmupSec = Math.max(1, 2 * ctx.settings.warmupSec);
  ctx.log(`pairs: warming up every variant on both reference servers (${warmupSec} s each)`);
  for (const pair of PAIRS.filter((p) => ctx.settings.pairKeys?.has(p.key) ?? true)) {
    for (const aRef of [0, 1] as const) {
      await ctx.worker.send<[HttpResult, HttpResult]>({
        cmd: "http-pair",
        a: { ...specFor(ctx, pair.a, aRef, 0), durationSec: warmupSec },
        b: { ...specFor(ctx, pair.b, aRef === 0 ? 1 : 0, 0), durationSec: warmupSec },
      });
    }
  }
  const adjacent = await adjacentRounds(ctx);
  const simultaneous = await simultaneousRounds(ctx);
  return [...adjacent, ...simultaneous];
}

const cpuUs = (r: HttpResult) => (r.serverCpuMs * 1000) / Math.max(1, r.requests);

/** What summarizePair reads of a pair: its names, sides' labels and target (the peers reuse it). */
export type PairNames = Pick<PairDef, "key" | "label" | "threshold"> & { a: { label: string }; b: { label: string } };

export function summarizePair(
  pair: PairNames,
  runs: ReadonlyArray<readonly [HttpResult, HttpResult]>,
  mode: PairMode = "simultaneous",
): PairResult {
  const ratios = runs.map(([a, b]) => b.rps / a.rps).filter((x) => Number.isFinite(x));
  const range = spread(ratios);
  return {
    key: pair.key,
    mode,
    label: pair.label,
    aLabel: pair.a.label,
    bLabel: pair.b.label,
    ...(pair.threshold === undefined ? {} : { threshold: pair.threshold }),
    ratios,
    ratio: median(ratios),
    ratioMin: range.min,
    ratioMax: range.max,
    aRps: median(runs.map(([a]) => a.rps)),
    bRps: median(runs.map(([, b]) => b.rps)),
    aCpuUs: median(runs.map(([a]) => cpuUs(a))),
    bCpuUs: median(runs.map(([, b]) => cpuUs(b))),
    non2xx: runs.reduce((n, [a, b]) => n + a.non2xx + a.errors + b.non2xx + b.errors, 0),
  };
}
