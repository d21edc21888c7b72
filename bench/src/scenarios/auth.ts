import type { HttpSpec } from "../protocol.js";
import { rotate } from "../stats.js";
import { type Ctx, countValid, fmtRun, http, type VariantResult } from "./context.js";

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
