import { mkdirSync, rmSync } from "node:fs";
import path from "node:path";
import { ENTRY, ROOT } from "@app/stack";
import pg from "pg";
import {
  BENCH_SMTP_URL,
  type Cores,
  type Database,
  type LoadWorker,
  pinDatabase,
  type ReferenceServer,
  runMicro,
  type Stack,
  startTwin,
  type Twin,
} from "./infra.js";
import { cpuMs, pin, rssKiB } from "./proc.js";
import { newestProfile, type ProfileSummary, summarizeProfile } from "./profile.js";
import type { HttpResult, HttpSpec, PublishResult, StreamsOpened, Subscriber } from "./protocol.js";
import { getSessionToken, mapLimit, type SeedUser, signIn } from "./seed.js";
import type { Settings } from "./settings.js";
import { median, pairedRatio, percentile, rotate, spread } from "./stats.js";

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

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function http(ctx: Ctx, spec: Omit<HttpSpec, "connections" | "durationSec" | "warmupSec"> & Partial<HttpSpec>): Promise<HttpResult> {
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

function countValid(ctx: Ctx, where: string, result: HttpResult): void {
  const bad = result.non2xx + result.errors + result.timeouts;
  if (bad > 0) {
    ctx.validNon2xx.count += bad;
    ctx.validNon2xx.where.push(`${where}: ${bad} (${JSON.stringify(result.statusCodes)})`);
  }
}

function fmtRun(r: HttpResult): string {
  return `${Math.round(r.rps)} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms, ${((r.serverCpuMs * 1000) / Math.max(1, r.requests)).toFixed(0)} µs CPU/req, non-2xx ${r.non2xx}, loader ${r.loaderCpuPct.toFixed(0)}%`;
}

// ---- micro --------------------------------------------------------------------------------------

export interface MicroResult {
  opensslSync: number;
  webcryptoAsync: number;
  joseJwtVerify: number;
  /** The product's whole cold path (`verifyToken`, cache off, key set loaded). */
  productVerify: number;
}

export async function microScenario(ctx: Ctx): Promise<MicroResult> {
  ctx.log("micro: Ed25519 verification cost on the server core");
  const r = await runMicro(ctx.cores.server, ctx.hotToken, ctx.jwkX, ctx.settings.quick ? 1000 : 3000);
  const out = {
    opensslSync: r.opensslSync as number,
    webcryptoAsync: r.webcryptoAsync as number,
    joseJwtVerify: r.joseJwtVerify as number,
    productVerify: r.productVerify as number,
  };
  ctx.log(
    `micro: OpenSSL ${out.opensslSync.toFixed(1)} µs, WebCrypto ${out.webcryptoAsync.toFixed(1)} µs, jose jwtVerify ${out.joseJwtVerify.toFixed(1)} µs, auth-verify cold path ${out.productVerify.toFixed(1)} µs`,
  );
  return out;
}

// ---- memory -------------------------------------------------------------------------------------

export interface MemoryResult {
  apiFreshKiB: number;
  apiIdleKiB: number;
  apiWarmKiB: number;
  apiCachedKiB: number;
  apiBytesPerCachedToken: number;
  refHeapBytesPerCachedToken: number;
  cachedTokens: number;
}

async function refMem(ctx: Ctx): Promise<number> {
  const res = await fetch(`${ctx.ref.url}/__mem`);
  return ((await res.json()) as { heapUsed: number }).heapUsed;
}

export async function memoryScenario(ctx: Ctx): Promise<MemoryResult> {
  const api = ctx.stack.api1;
  const pid = api.child.pid as number;
  const url = `${ctx.stack.apiUrls[0]}/api/me`;
  const n = ctx.settings.cachedTokens;
  ctx.log(`memory: api-1 RSS fresh, idle, after ${n} requests with one token, then with ${n} distinct cached tokens`);
  const apiFreshKiB = rssKiB(pid);
  const first = await fetch(url, { headers: { authorization: `Bearer ${ctx.hotToken}` } });
  await first.arrayBuffer();
  if (first.status !== 200) throw new Error(`GET /api/me answered ${first.status}`);
  await sleep(1000);
  const apiIdleKiB = rssKiB(pid);
  const warm = await http(ctx, { url, headers: { authorization: `Bearer ${ctx.hotToken}` }, amount: n, serverPids: [pid] });
  countValid(ctx, "memory warm-up", warm);
  await sleep(2000);
  const apiWarmKiB = rssKiB(pid);
  // The "cached" pool holds each of its n tokens twice in a row: cached on the second sighting.
  const cached = await http(ctx, {
    url,
    rotate: { pool: "cached", header: "authorization", prefix: "Bearer ", cursor: "ref" },
    amount: 2 * n,
    serverPids: [pid],
  });
  countValid(ctx, "memory cached tokens", cached);
  await sleep(2000);
  const apiCachedKiB = rssKiB(pid);
  // The same in the reference server, where a full GC can be forced: heap bytes per cached entry.
  const refUrl = `${ctx.ref.url}/jose`;
  const warmRef = await http(ctx, {
    url: refUrl,
    headers: { authorization: `Bearer ${ctx.hotToken}` },
    amount: n,
    serverPids: [ctx.ref.pid],
  });
  countValid(ctx, "memory reference warm-up", warmRef);
  const heap0 = await refMem(ctx);
  const cachedRef = await http(ctx, {
    url: refUrl,
    rotate: { pool: "cached", header: "authorization", prefix: "Bearer ", cursor: "ref" },
    amount: 2 * n,
    serverPids: [ctx.ref.pid],
  });
  countValid(ctx, "memory reference cached tokens", cachedRef);
  const heap1 = await refMem(ctx);
  const out: MemoryResult = {
    apiFreshKiB,
    apiIdleKiB,
    apiWarmKiB,
    apiCachedKiB,
    apiBytesPerCachedToken: ((apiCachedKiB - apiWarmKiB) * 1024) / n,
    refHeapBytesPerCachedToken: (heap1 - heap0) / n,
    cachedTokens: n,
  };
  ctx.log(
    `memory: api-1 RSS ${apiIdleKiB} KiB idle, ${apiWarmKiB} KiB warm, ${apiCachedKiB} KiB with ${n} cached tokens; reference heap ${(out.refHeapBytesPerCachedToken).toFixed(0)} B/entry`,
  );
  return out;
}

// ---- auth overhead and the cookie alternative ----------------------------------------------------

interface VariantDef {
  key: string;
  label: string;
  spec: Omit<HttpSpec, "connections" | "durationSec" | "warmupSec" | "serverPids">;
  pid: () => number;
  pg?: boolean;
  refCache?: "cached" | "uncached";
  apiProxy?: boolean;
}

export async function authScenario(ctx: Ctx): Promise<VariantResult[]> {
  const ref = ctx.ref.url;
  const api1 = ctx.stack.apiUrls[0] as string;
  const api2 = ctx.stack.apiUrls[1] as string;
  const hot = { authorization: `Bearer ${ctx.hotToken}` };
  const cold = (cursor: string) => ({ pool: "cold", header: "authorization", prefix: "Bearer ", cursor });
  const cookies = { pool: "cookies", header: "cookie", prefix: "", cursor: "ref" };
  const refPid = () => ctx.ref.pid;
  const api1Pid = () => ctx.stack.api1.child.pid as number;
  const api2Pid = () => ctx.stack.api2.child.pid as number;
  const defs: VariantDef[] = [
    { key: "plain", label: "reference /plain — no authentication (baseline)", spec: { url: `${ref}/plain` }, pid: refPid },
    {
      key: "plain-legacy-log",
      label: "reference /legacy-log/plain — /plain with the previous access logging (pino-http, redaction, sync stdout)",
      spec: { url: `${ref}/legacy-log/plain` },
      pid: refPid,
    },
    { key: "jose-hot", label: "reference /jose — repeated token", spec: { url: `${ref}/jose`, headers: hot }, pid: refPid },
    {
      key: "jose-cold",
      label: `reference /jose — ${ctx.settings.coldTokens} distinct tokens round-robin`,
      spec: { url: `${ref}/jose`, rotate: cold("ref") },
      pid: refPid,
      refCache: "cached",
    },
    {
      key: "jose-nocache",
      label: "reference /jose — verify cache disabled",
      spec: { url: `${ref}/jose-nocache`, headers: hot },
      pid: refPid,
    },
    {
      key: "cookie",
      label: "reference /cookie — session in PostgreSQL via Prisma (rejected alternative)",
      spec: { url: `${ref}/cookie`, rotate: cookies },
      pid: refPid,
      pg: true,
    },
    {
      key: "cookie-pg",
      label: "reference /cookie-pg — session in PostgreSQL, one raw SQL query",
      spec: { url: `${ref}/cookie-pg`, rotate: cookies },
      pid: refPid,
      pg: true,
    },
    {
      key: "api-hot",
      label: "API GET /api/me — repeated token",
      spec: { url: `${api1}/api/me`, headers: hot },
      pid: api1Pid,
      apiProxy: true,
    },
    {
      key: "api-cold",
      label: `API GET /api/me — ${ctx.settings.coldTokens} distinct tokens round-robin`,
      spec: { url: `${api1}/api/me`, rotate: cold("api-1") },
      pid: api1Pid,
      apiProxy: true,
    },
    { key: "api-nocache", label: "API GET /api/me — VERIFY_CACHE=false", spec: { url: `${api2}/api/me`, headers: hot }, pid: api2Pid },
  ];
  const results = new Map<string, VariantResult>(defs.map((d) => [d.key, { key: d.key, label: d.label, rounds: [] }]));
  const hits = new Map<string, { hits: number; total: number }>();
  const proxy = new Map<string, { trips: number; requests: number }>();
  for (let round = 0; round < ctx.settings.rounds; round += 1) {
    for (const def of rotate(defs, round)) {
      const before = def.refCache ? await refStats(ctx, def.refCache) : undefined;
      const trips0 = ctx.stack.apiProxy.snapshot().roundTrips;
      const result = await http(ctx, {
        ...def.spec,
        serverPids: [def.pid()],
        ...(def.pg && ctx.db.postmasterPid ? { extraTreePid: ctx.db.postmasterPid } : {}),
      });
      if (def.apiProxy) {
        const p = proxy.get(def.key) ?? { trips: 0, requests: 0 };
        p.trips += ctx.stack.apiProxy.snapshot().roundTrips - trips0;
        p.requests += result.requests;
        proxy.set(def.key, p);
      }
      if (def.refCache && before) {
        const after = await refStats(ctx, def.refCache);
        const h = hits.get(def.key) ?? { hits: 0, total: 0 };
        h.hits += after.cacheHits - before.cacheHits;
        h.total += after.verifications - before.verifications;
        hits.set(def.key, h);
      }
      (results.get(def.key) as VariantResult).rounds.push(result);
      countValid(ctx, `auth ${def.key}`, result);
      ctx.log(`auth round ${round + 1}/${ctx.settings.rounds} ${def.key.padEnd(12)} ${fmtRun(result)}`);
    }
  }
  for (const [key, h] of hits) {
    const v = results.get(key) as VariantResult;
    v.cacheHitRate = h.total > 0 ? h.hits / h.total : Number.NaN;
  }
  for (const [key, p] of proxy) {
    const v = results.get(key) as VariantResult;
    v.dbRoundTripsPerRequest = p.requests > 0 ? p.trips / p.requests : Number.NaN;
  }
  return [...results.values()];
}

async function refStats(ctx: Ctx, which: "cached" | "uncached"): Promise<{ cacheHits: number; verifications: number }> {
  const res = await fetch(`${ctx.ref.url}/__stats`);
  const body = (await res.json()) as Record<string, { cacheHits: number; verifications: number }>;
  return body[which] as { cacheHits: number; verifications: number };
}

// ---- identity -------------------------------------------------------------------------------------

export interface IdentityResult {
  getSession: VariantResult;
  dbRoundTripsPerGetSession: number;
  statementsPerGetSession: number;
  dbRoundTripsPerJwks: number;
  signInMs: { p50: number; p99: number; mean: number; n: number };
  kdf: string;
}

export async function identityScenario(ctx: Ctx): Promise<IdentityResult> {
  const identity = ctx.stack.identity1;
  const pid = identity.child.pid as number;
  const url = ctx.stack.identityUrls[0] as string;
  pin(pid, ctx.cores.server);
  const getSession: VariantResult = { key: "get-session", label: "identity POST /api/auth/get-session (JWT issuance)", rounds: [] };
  let signInMs: number[] = [];
  try {
    for (let round = 0; round < ctx.settings.rounds; round += 1) {
      const result = await http(ctx, {
        url: `${url}/api/auth/get-session`,
        method: "POST",
        rotate: { pool: "cookies", header: "cookie", prefix: "", cursor: "identity-1" },
        serverPids: [pid],
        ...(ctx.db.postmasterPid ? { extraTreePid: ctx.db.postmasterPid } : {}),
      });
      getSession.rounds.push(result);
      countValid(ctx, "identity get-session", result);
      ctx.log(`identity round ${round + 1}/${ctx.settings.rounds} get-session ${fmtRun(result)}`);
    }
    // Sign-in latency, one at a time (the password KDF dominates), on a user of its own.
    const user = ctx.users.at(-1) as SeedUser;
    await signIn(url, user);
    signInMs = [];
    for (let i = 0; i < ctx.settings.signIns; i += 1) signInMs.push(await signIn(url, user));
  } finally {
    pin(pid, ctx.cores.load);
  }
  // Database round trips per get-session and per JWKS, at identity-2 (behind the counting proxy).
  const url2 = ctx.stack.identityUrls[1] as string;
  const cookies = ctx.users.map((u) => u.cookie);
  await getSessionToken(url2, cookies[0] as string);
  const n = 200;
  const before = ctx.stack.identityProxy.snapshot();
  await mapLimit(
    Array.from({ length: n }, (_, i) => i),
    4,
    (i) => getSessionToken(url2, cookies[i % cookies.length] as string),
  );
  const after = ctx.stack.identityProxy.snapshot();
  const jwksBefore = ctx.stack.identityProxy.snapshot();
  for (let i = 0; i < 50; i += 1) await (await fetch(`${url2}/api/auth/jwks`)).arrayBuffer();
  const jwksAfter = ctx.stack.identityProxy.snapshot();
  const kdf = await passwordHashParams(ctx.db.url);
  const out: IdentityResult = {
    getSession,
    dbRoundTripsPerGetSession: (after.roundTrips - before.roundTrips) / n,
    statementsPerGetSession: (after.statements - before.statements) / n,
    dbRoundTripsPerJwks: (jwksAfter.roundTrips - jwksBefore.roundTrips) / 50,
    signInMs: {
      p50: percentile(signInMs, 50),
      p99: percentile(signInMs, 99),
      mean: signInMs.reduce((a, b) => a + b, 0) / Math.max(1, signInMs.length),
      n: signInMs.length,
    },
    kdf,
  };
  ctx.log(
    `identity: ${out.dbRoundTripsPerGetSession.toFixed(2)} DB round trips per get-session, sign-in p50 ${out.signInMs.p50.toFixed(1)} ms (${kdf})`,
  );
  return out;
}

async function passwordHashParams(databaseUrl: string): Promise<string> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ password_hash: string }>(
      "SELECT password_hash FROM account WHERE password_hash IS NOT NULL LIMIT 1",
    );
    const hash = rows[0]?.password_hash ?? "";
    const match = /^\$(argon2\w+)\$v=(\d+)\$([^$]+)\$/.exec(hash);
    return match ? `${match[1]} v=${match[2]} ${match[3]}` : "unknown";
  } finally {
    await client.end();
  }
}

// ---- key-set traffic -----------------------------------------------------------------------------

export interface JwksResult {
  floodSec: number;
  flood: HttpResult;
  fetches: number;
  allowed: number;
  fetchOffsetsSec: number[];
  minSpacingSec: number;
  probes: number;
  probeNon2xx: number;
}

export async function jwksScenario(ctx: Ctx): Promise<JwksResult> {
  const api1 = ctx.stack.apiUrls[0] as string;
  const pid = ctx.stack.api1.child.pid as number;
  const floodSec = ctx.settings.floodSec;
  ctx.log(`jwks: ${floodSec} s flood of unknown-kid tokens on api-1, counting JWKS fetches at identity-1`);
  const all = ctx.stack.jwksFetches;
  const start = all.length;
  const lastBefore = all.at(-1);
  const t0 = Date.now();
  let probing = true;
  let probes = 0;
  let probeNon2xx = 0;
  const prober = (async () => {
    while (probing) {
      probes += 1;
      try {
        const res = await fetch(`${api1}/api/me`, {
          headers: { authorization: `Bearer ${ctx.hotToken}` },
          signal: AbortSignal.timeout(5_000),
        });
        await res.arrayBuffer();
        if (res.status < 200 || res.status > 299) probeNon2xx += 1;
      } catch {
        probeNon2xx += 1;
      }
      await sleep(100);
    }
  })();
  const flood = await http(ctx, {
    url: `${api1}/api/me`,
    rotate: { pool: "unknown", header: "authorization", prefix: "Bearer ", cursor: "api-1" },
    durationSec: floodSec,
    warmupSec: 0,
    serverPids: [pid],
  });
  probing = false;
  await prober;
  await sleep(500);
  const times = all.slice(start);
  const withPrevious = lastBefore === undefined ? times : [lastBefore, ...times];
  let minSpacing = Number.POSITIVE_INFINITY;
  for (let i = 1; i < withPrevious.length; i += 1)
    minSpacing = Math.min(minSpacing, ((withPrevious[i] as number) - (withPrevious[i - 1] as number)) / 1000);
  if (probeNon2xx > 0) {
    ctx.validNon2xx.count += probeNon2xx;
    ctx.validNon2xx.where.push(`jwks flood valid-token probes: ${probeNon2xx}`);
  }
  const out: JwksResult = {
    floodSec,
    flood,
    fetches: times.length,
    allowed: Math.floor(floodSec / 30) + 1,
    fetchOffsetsSec: times.map((t) => (t - t0) / 1000),
    minSpacingSec: minSpacing,
    probes,
    probeNon2xx,
  };
  ctx.log(
    `jwks: ${Math.round(flood.rps)} req/s of unknown kids (${JSON.stringify(flood.statusCodes)}), ${out.fetches} JWKS fetches (allowed ${out.allowed}), valid probes non-2xx ${probeNon2xx}/${probes}`,
  );
  return out;
}

// ---- streaming ----------------------------------------------------------------------------------

export interface StreamingResult {
  ws: StreamsOpened & { kiBPerConnection: number };
  sse: StreamsOpened & { kiBPerConnection: number };
  rssBeforeKiB: number;
  publish: PublishResult;
  api1CpuMsDuringPublish: number;
}

export async function streamingScenario(ctx: Ctx): Promise<StreamingResult> {
  const api1 = ctx.stack.apiUrls[0] as string;
  const api2 = ctx.stack.apiUrls[1] as string;
  const pid = ctx.stack.api1.child.pid as number;
  const subscribers: Subscriber[] = ctx.users.map((_, i) => ({ token: ctx.userTokens[i] as string, taskId: ctx.tasks[i] as string }));
  const spec = { baseUrl: api1, subscribers, ws: ctx.settings.wsConnections, sse: ctx.settings.sseStreams, batch: 100 };
  ctx.log(`streaming: ${spec.ws} WebSockets and ${spec.sse} SSE streams on api-1, events posted on api-2`);
  await sleep(1000);
  const rssBeforeKiB = rssKiB(pid);
  try {
    const ws = await ctx.worker.send<StreamsOpened>({ cmd: "open-streams", spec, kind: "ws" });
    await sleep(2000);
    const rssWs = rssKiB(pid);
    const sse = await ctx.worker.send<StreamsOpened>({ cmd: "open-streams", spec: { ...spec, batch: 50 }, kind: "sse" });
    await sleep(2000);
    const rssSse = rssKiB(pid);
    ctx.log(`streaming: ws ${ws.opened} open (${ws.failed} failed), sse ${sse.opened} open (${sse.failed} failed)`);
    const cpu0 = cpuMs(pid);
    const publish = await ctx.worker.send<PublishResult>({
      cmd: "publish",
      spec: { baseUrl: api2, targets: subscribers, rounds: ctx.settings.eventRounds, intervalMs: 2000, settleMs: 5000 },
    });
    const api1CpuMsDuringPublish = cpuMs(pid) - cpu0;
    if (publish.postNon2xx > 0) {
      ctx.validNon2xx.count += publish.postNon2xx;
      ctx.validNon2xx.where.push(`streaming event posts: ${publish.postNon2xx}`);
    }
    ctx.log(
      `streaming: ws delivery p99 ${publish.ws.p99.toFixed(1)} ms (${publish.ws.received}/${publish.ws.expected}), sse p99 ${publish.sse.p99.toFixed(1)} ms (${publish.sse.received}/${publish.sse.expected})`,
    );
    return {
      ws: { ...ws, kiBPerConnection: ws.opened ? (rssWs - rssBeforeKiB) / ws.opened : Number.NaN },
      sse: { ...sse, kiBPerConnection: sse.opened ? (rssSse - rssWs) / sse.opened : Number.NaN },
      rssBeforeKiB,
      publish,
      api1CpuMsDuringPublish,
    };
  } finally {
    await ctx.worker.send({ cmd: "close-streams" });
    await sleep(1000);
  }
}

// ---- profile --------------------------------------------------------------------------------------

export interface ProfileResult {
  apiCold?: ProfileSummary;
  apiHot?: ProfileSummary;
  identityGetSession?: ProfileSummary;
  dir: string;
}

const WATCH = {
  "key decryption (SecretBox.open / createPrivateKey)": /(^open .*secret-box)|createPrivateKey/,
  "jose jwtVerify (inclusive)": /^jwtVerify /,
  "Ed25519 verify (WebCrypto)": /^verify .*node:internal\/crypto\/(webcrypto|cfrg|sig)/,
  "pino / pino-http logging (inclusive)": /node_modules\/\.pnpm\/pino/,
};

async function profileApi(ctx: Ctx, dir: string, pool: "cold" | "hot"): Promise<ProfileSummary | undefined> {
  const sub = path.join(dir, `api-${pool}`);
  mkdirSync(sub, { recursive: true });
  const twin = await startTwin("profiled api", ENTRY.api, ctx.cores.server, ["--cpu-prof", `--cpu-prof-dir=${sub}`], ctx.stack.apiEnv);
  try {
    const url = `${twin.url}/api/me`;
    await (await fetch(url, { headers: { authorization: `Bearer ${ctx.hotToken}` } })).arrayBuffer();
    const result = await http(ctx, {
      url,
      ...(pool === "cold"
        ? { rotate: { pool: "cold", header: "authorization", prefix: "Bearer ", cursor: "profile-api" } }
        : { headers: { authorization: `Bearer ${ctx.hotToken}` } }),
      durationSec: ctx.settings.profileSec,
      warmupSec: 1,
      serverPids: [twin.pid],
    });
    countValid(ctx, `profile api ${pool}`, result);
    ctx.log(`profile: api ${pool} under --cpu-prof: ${fmtRun(result)}`);
  } finally {
    await twin.stop();
  }
  const file = newestProfile(sub);
  return file ? summarizeProfile(file, 15, WATCH) : undefined;
}

async function profileIdentity(ctx: Ctx, dir: string): Promise<ProfileSummary | undefined> {
  const sub = path.join(dir, "identity-get-session");
  mkdirSync(sub, { recursive: true });
  const twin = await startTwin("profiled identity", ENTRY.identity, ctx.cores.server, ["--cpu-prof", `--cpu-prof-dir=${sub}`], {
    ...process.env,
    NODE_ENV: "production",
    LOG_LEVEL: ctx.settings.logLevel,
    DATABASE_URL: ctx.db.url,
    AUTH_SECRET: ctx.stack.authSecret,
    BASE_URL: ctx.stack.baseUrl,
    RATE_LIMIT_IP_MAX: "100000000",
    RATE_LIMIT_ACCOUNT_MAX: "100000000",
    MAX_SESSIONS_PER_USER: "100000",
    SMTP_URL: BENCH_SMTP_URL,
    REQUIRE_EMAIL_VERIFICATION: "false",
  });
  try {
    const result = await http(ctx, {
      url: `${twin.url}/api/auth/get-session`,
      method: "POST",
      rotate: { pool: "cookies", header: "cookie", prefix: "", cursor: "profile-identity" },
      durationSec: ctx.settings.profileSec,
      warmupSec: 1,
      serverPids: [twin.pid],
    });
    countValid(ctx, "profile identity get-session", result);
    ctx.log(`profile: identity get-session under --cpu-prof: ${fmtRun(result)}`);
  } finally {
    await twin.stop();
  }
  const file = newestProfile(sub);
  return file ? summarizeProfile(file, 15, WATCH) : undefined;
}

export async function profileScenario(ctx: Ctx): Promise<ProfileResult> {
  const dir = path.join(ROOT, "artifacts", "bench", "profiles", new Date().toISOString().replace(/[:.]/g, "-"));
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  ctx.log(`profile: --cpu-prof of the API cold path, hot path and identity get-session (files under ${path.relative(ROOT, dir)})`);
  pinDatabase(ctx.db, ctx.cores.server);
  const apiCold = await profileApi(ctx, dir, "cold");
  const apiHot = await profileApi(ctx, dir, "hot");
  const identityGetSession = await profileIdentity(ctx, dir);
  return {
    dir,
    ...(apiCold ? { apiCold } : {}),
    ...(apiHot ? { apiHot } : {}),
    ...(identityGetSession ? { identityGetSession } : {}),
  };
}
