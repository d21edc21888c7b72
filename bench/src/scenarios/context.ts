import type { Cores, Database, LoadWorker, ReferenceServer, Stack, Twin } from "../infra.js";
import type { HttpResult, HttpSpec } from "../protocol.js";
import type { SeedUser } from "../seed.js";
import type { Settings } from "../settings.js";
import { median, pairedRatio, spread } from "../stats.js";

/** Everything the scenarios share. */
export interface Ctx {
  settings: Settings;
  cores: Cores;
  db: Database;
  stack: Stack;
  ref: ReferenceServer;
  /** A second, identical reference server on the same core (the pairs scenario). */
  refB?: ReferenceServer;
  /** The API as server.ts builds it, also answering requests without a credential (api-without-auth.ts; pairs). */
  apiTwin?: Twin;
  worker: LoadWorker;
  log: (line: string) => void;
  users: SeedUser[];
  /** One token per user (same order as users). */
  userTokens: string[];
  tasks: string[];
  hotToken: string;
  jwkX: string;
  /** Requests with valid credentials that did not get a 2xx, across every scenario. */
  validNon2xx: { count: number; where: string[] };
}

/** A measured variant: per-round results (round i of every variant ran in the same interleaved round). */
export interface VariantResult {
  key: string;
  label: string;
  rounds: HttpResult[];
  /** Verify-cache hit rate observed in the reference server during these runs (cold path check). */
  cacheHitRate?: number;
  /** Database round trips per request seen by the proxy in front of the API. */
  dbRoundTripsPerRequest?: number;
}

/** A summarized row of the report. */
export interface Row {
  key: string;
  label: string;
  rps: number;
  rpsMin: number;
  rpsMax: number;
  p50: number;
  p99: number;
  cpuUs: number;
  pgCpuUs: number;
  ratio: number;
  /**
   * Baseline CPU per request ÷ this variant's (server + PostgreSQL) CPU per request: the req/s ratio
   * a saturated, dedicated core would give. Robust where req/s is not: on a shared core a process
   * with more runnable threads (WebCrypto's pool) gets a larger share, which biases req/s ratios.
   */
  cpuRatio: number;
  non2xx: number;
  loaderPct: number;
  requests: number;
  note?: string;
}

export function summarizeVariant(v: VariantResult, baseline: VariantResult | undefined): Row {
  const r = v.rounds;
  const range = spread(r.map((x) => x.rps));
  const notes: string[] = [];
  if (v.cacheHitRate !== undefined) notes.push(`cache hits ${(v.cacheHitRate * 100).toFixed(1)}%`);
  if (v.dbRoundTripsPerRequest !== undefined) notes.push(`DB round trips/req ${v.dbRoundTripsPerRequest.toFixed(3)}`);
  return {
    key: v.key,
    label: v.label,
    rps: median(r.map((x) => x.rps)),
    rpsMin: range.min,
    rpsMax: range.max,
    p50: median(r.map((x) => x.p50)),
    p99: median(r.map((x) => x.p99)),
    cpuUs: median(r.map((x) => (x.serverCpuMs * 1000) / Math.max(1, x.requests))),
    pgCpuUs: median(r.map((x) => (x.extraCpuMs * 1000) / Math.max(1, x.requests))),
    ratio: baseline
      ? pairedRatio(
          r.map((x) => x.rps),
          baseline.rounds.map((x) => x.rps),
        )
      : Number.NaN,
    cpuRatio: Number.NaN,
    non2xx: r.reduce((a, x) => a + x.non2xx + x.errors, 0),
    loaderPct: median(r.map((x) => x.loaderCpuPct)),
    requests: r.reduce((a, x) => a + x.requests, 0),
    ...(notes.length ? { note: notes.join("; ") } : {}),
  };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function http(ctx: Ctx, spec: Omit<HttpSpec, "connections" | "durationSec" | "warmupSec"> & Partial<HttpSpec>): Promise<HttpResult> {
  return ctx.worker.send<HttpResult>({
    cmd: "http",
    spec: {
      connections: ctx.settings.connections,
      durationSec: ctx.settings.durationSec,
      warmupSec: ctx.settings.warmupSec,
      ...spec,
    },
  });
}

export function countValid(ctx: Ctx, where: string, result: HttpResult): void {
  const bad = result.non2xx + result.errors + result.timeouts;
  if (bad > 0) {
    ctx.validNon2xx.count += bad;
    ctx.validNon2xx.where.push(`${where}: ${bad} (${JSON.stringify(result.statusCodes)})`);
  }
}

export function fmtRun(r: HttpResult): string {
  return `${Math.round(r.rps)} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms, ${((r.serverCpuMs * 1000) / Math.max(1, r.requests)).toFixed(0)} µs CPU/req, non-2xx ${r.non2xx}, loader ${r.loaderCpuPct.toFixed(0)}%`;
}

// ---- micro --------------------------------------------------------------------------------------
