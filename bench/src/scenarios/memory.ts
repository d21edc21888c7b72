import { rssKiB } from "../proc.js";
import { type Ctx, countValid, http, sleep } from "./context.js";

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
