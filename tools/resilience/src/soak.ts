import { rssOf } from "./cluster.js";

/** A process whose memory the soak samples. */
export interface Watched {
  name: string;
  pid: number;
}

/** Options of {@link runSoak}. */
export interface SoakOptions {
  /** Base URL of the service (the gateway). */
  baseUrl: string;
  /** Bearer tokens to spread the load over (one per simulated user). */
  jwts: string[];
  /** Measured duration, after the warm-up. */
  seconds: number;
  /** Warm-up before the first memory sample (counted for errors too). Default 5 s. */
  warmupSeconds?: number;
  /** Concurrent workers. Default 8. */
  workers?: number;
  /** Target requests per second over all workers (steady pacing). Default 150. */
  rps?: number;
  /** Processes whose resident memory is sampled at start, every 5 s and at the end. */
  watch: Watched[];
  /** Progress lines (default: none). */
  log?: (line: string) => void;
}

/** Memory of one process over the measured part of the soak, in MiB. */
export interface RssReport {
  name: string;
  startMb: number;
  /** The typical (median) reading of the first half of the measured window. */
  midMb: number;
  endMb: number;
  maxMb: number;
  /**
   * How much the memory level rose: the median reading of the last third minus the median of the
   * first half. Garbage collection makes single readings jump up and down by tens of MiB; a leak
   * moves every reading, hence the medians, so this is the number to bound. (Lowest readings were
   * used before: one GC dip in the first half then looked like a 30+ MiB rise.)
   */
  lateGrowthMb: number;
}

/** One resident-memory reading: when (epoch ms) and how many bytes. */
export interface RssReading {
  at: number;
  bytes: number;
}

function medianOf(values: number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/**
 * The memory levels of one process from its readings: the median of the first half (readings at
 * or before `halfway`) and of the last third (at or after `lastThird`), in bytes. With no reading
 * in a phase, the first or the last reading stands in.
 */
export function memoryLevels(readings: readonly RssReading[], halfway: number, lastThird: number): { early: number; late: number } {
  const early = readings.filter((r) => r.at <= halfway).map((r) => r.bytes);
  const late = readings.filter((r) => r.at >= lastThird).map((r) => r.bytes);
  return {
    early: early.length ? medianOf(early) : (readings[0]?.bytes ?? 0),
    late: late.length ? medianOf(late) : (readings[readings.length - 1]?.bytes ?? 0),
  };
}

/** What a soak measured. */
export interface SoakResult {
  seconds: number;
  requests: number;
  rps: number;
  /** Requests that did not answer 2xx (including network errors, as status 0). */
  errors: number;
  statuses: Record<string, number>;
  /** A few failing answers, for the report. */
  samples: string[];
  p50Ms: number;
  p99Ms: number;
  rss: RssReport[];
}

const MB = 1024 * 1024;
const round = (n: number) => Math.round(n * 10) / 10;

/** One request of the mix: mostly reads (verification + a list), some writes. */
async function one(baseUrl: string, jwt: string, i: number): Promise<number> {
  const authorization = `Bearer ${jwt}`;
  const kind = i % 10;
  const res =
    kind === 0
      ? await fetch(`${baseUrl}/api/tasks`, {
          method: "POST",
          headers: { authorization, "content-type": "application/json" },
          body: JSON.stringify({ title: `soak ${i}` }),
          signal: AbortSignal.timeout(10_000),
        })
      : await fetch(kind < 6 ? `${baseUrl}/api/me` : `${baseUrl}/api/tasks?limit=5`, {
          headers: { authorization },
          signal: AbortSignal.timeout(10_000),
        });
  await res.arrayBuffer();
  return res.status;
}

/**
 * Runs a steady, paced load of authenticated requests (GET /api/me, GET /api/tasks, POST
 * /api/tasks) for `warmupSeconds + seconds`, and samples the resident memory of `watch`
 * between the end of the warm-up and the end. Never throws for a failing request: it counts it.
 */
export async function runSoak(options: SoakOptions): Promise<SoakResult> {
  const workers = options.workers ?? 8;
  const rps = options.rps ?? 150;
  const warmupMs = (options.warmupSeconds ?? 10) * 1000;
  const log = options.log ?? (() => undefined);
  const statuses: Record<string, number> = {};
  const samples: string[] = [];
  const latencies: number[] = [];
  const started = Date.now();
  const measuredFrom = started + warmupMs;
  const end = measuredFrom + options.seconds * 1000;
  const halfway = measuredFrom + (options.seconds * 1000) / 2;
  const lastThird = measuredFrom + (options.seconds * 1000 * 2) / 3;
  const readings = new Map<string, RssReading[]>(options.watch.map((w) => [w.name, []]));
  const sample = (first: boolean) => {
    const at = Date.now();
    for (const w of options.watch) {
      const list = readings.get(w.name) as RssReading[];
      if (first) list.length = 0;
      list.push({ at, bytes: rssOf(w.pid) });
    }
  };
  let counter = 0;
  let measured = 0;
  const intervalMs = (workers * 1000) / rps;
  const worker = async (w: number) => {
    let due = Date.now() + (w * intervalMs) / workers;
    while (Date.now() < end) {
      const wait = due - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      due += intervalMs;
      const i = counter++;
      const jwt = options.jwts[i % options.jwts.length] ?? "";
      const t0 = performance.now();
      let status = 0;
      try {
        status = await one(options.baseUrl, jwt, i);
      } catch (error) {
        if (samples.length < 5) samples.push(`request ${i}: ${(error as Error).message}`);
      }
      latencies.push(performance.now() - t0);
      statuses[status] = (statuses[status] ?? 0) + 1;
      if ((status < 200 || status >= 300) && samples.length < 5 && status !== 0) samples.push(`request ${i}: HTTP ${status}`);
      if (Date.now() >= measuredFrom) measured += 1;
    }
  };
  const sampler = (async () => {
    await new Promise((r) => setTimeout(r, warmupMs));
    sample(true);
    log(`warm-up done; measuring for ${options.seconds} s`);
    while (Date.now() + 2_000 < end) {
      await new Promise((r) => setTimeout(r, 2_000));
      sample(false);
      log(`${Math.round((Date.now() - measuredFrom) / 1000)} s: ${counter} requests, ${JSON.stringify(statuses)}`);
    }
  })();
  await Promise.all([...Array.from({ length: workers }, (_, w) => worker(w)), sampler]);
  sample(false);
  latencies.sort((a, b) => a - b);
  const at = (q: number) => round(latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0);
  const requests = Object.values(statuses).reduce((a, b) => a + b, 0);
  const errors = Object.entries(statuses)
    .filter(([s]) => Number(s) < 200 || Number(s) >= 300)
    .reduce((a, [, n]) => a + n, 0);
  return {
    seconds: options.seconds,
    requests,
    rps: round(measured / options.seconds),
    errors,
    statuses,
    samples,
    p50Ms: at(0.5),
    p99Ms: at(0.99),
    rss: options.watch.map((w) => {
      const list = readings.get(w.name) ?? [];
      const bytes = list.map((r) => r.bytes);
      const levels = memoryLevels(list, halfway, lastThird);
      return {
        name: w.name,
        startMb: round((bytes[0] ?? 0) / MB),
        midMb: round(levels.early / MB),
        endMb: round((bytes[bytes.length - 1] ?? 0) / MB),
        maxMb: round(Math.max(0, ...bytes) / MB),
        lateGrowthMb: round((levels.late - levels.early) / MB),
      };
    }),
  };
}

/** One line per fact, for people and CI logs. */
export function describeSoak(result: SoakResult): string {
  const memory = result.rss
    .map((r) => `${r.name} ${r.startMb} -> ${r.midMb} -> ${r.endMb} MiB (max ${r.maxMb}, level rise ${r.lateGrowthMb})`)
    .join("; ");
  return [
    `soak: ${result.requests} requests in ${result.seconds} s measured (+ warm-up): ${result.rps} req/s, ${result.errors} errors, p50 ${result.p50Ms} ms, p99 ${result.p99Ms} ms`,
    `soak: statuses ${JSON.stringify(result.statuses)}`,
    `soak: memory (RSS) ${memory}`,
    ...result.samples.map((s) => `soak: failure ${s}`),
  ].join("\n");
}
