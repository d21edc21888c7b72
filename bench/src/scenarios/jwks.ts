import type { HttpResult } from "../protocol.js";
import { type Ctx, http, sleep } from "./context.js";

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
