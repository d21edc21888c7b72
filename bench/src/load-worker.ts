#!/usr/bin/env node
/**
 * The load generator: a separate process (pinned to its own core by the orchestrator) that runs
 * autocannon and the WebSocket/SSE clients on command over IPC, and reads the servers' CPU time
 * from /proc right around each measured run.
 */
import http from "node:http";
import { performance } from "node:perf_hooks";
import autocannon from "autocannon";
import WebSocket from "ws";
import { cpuMsOf, cpuTreeMs } from "./proc.js";
import type {
  Command,
  HttpResult,
  HttpSpec,
  LatencySummary,
  PublishResult,
  PublishSpec,
  Reply,
  StreamsOpened,
  StreamsSpec,
} from "./protocol.js";
import { percentile } from "./stats.js";

const pools = new Map<string, string[]>();
/** Next index per `pool@cursor`, kept across runs. */
const cursors = new Map<string, number>();

function cannon(spec: HttpSpec, options: { durationSec: number; amount?: number }): Promise<autocannon.Result> {
  const headers: Record<string, string> = { ...spec.headers };
  const base: autocannon.Options = {
    url: spec.url,
    method: spec.method ?? "GET",
    headers,
    connections: spec.connections,
    pipelining: 1,
    timeout: 10,
    ...(options.amount === undefined ? { duration: options.durationSec } : { amount: options.amount }),
    ...(spec.body === undefined ? {} : { body: spec.body }),
  };
  const rotate = spec.rotate;
  if (rotate) {
    const values = pools.get(rotate.pool);
    if (!values || values.length === 0) throw new Error(`unknown pool ${rotate.pool}`);
    const key = `${rotate.pool}@${rotate.cursor}`;
    base.requests = [
      {
        setupRequest: (req) => {
          const next = cursors.get(key) ?? 0;
          const value = values[next % values.length] as string;
          cursors.set(key, next + 1);
          req.headers = { ...headers, [rotate.header]: `${rotate.prefix}${value}` };
          return req;
        },
      },
    ];
  }
  return new Promise((resolve, reject) => {
    autocannon(base, (error, result) => (error ? reject(error) : resolve(result)));
  });
}

/** One autocannon result as the orchestrator's record of a measured run. */
function toHttpResult(
  result: autocannon.Result,
  measured: { durationSec: number; serverCpuMs: number; extraCpuMs: number; loaderCpuPct: number },
): HttpResult {
  const statusCodes: Record<string, number> = {};
  for (const [code, stat] of Object.entries(result.statusCodeStats ?? {})) statusCodes[code] = Number(stat?.count ?? 0);
  const requests = Object.values(statusCodes).reduce((a, b) => a + b, 0);
  return {
    requests,
    rps: requests / measured.durationSec,
    p50: result.latency.p50,
    p90: result.latency.p90,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes,
    ...measured,
  };
}

/** The load generator's own CPU use since `self0`/`t0`, in % of one core. */
function loaderPct(self0: NodeJS.CpuUsage, t0: number): number {
  const self = process.cpuUsage(self0);
  return ((self.user + self.system) / 1000 / (performance.now() - t0)) * 100;
}

async function runHttp(spec: HttpSpec): Promise<HttpResult> {
  if (spec.amount === undefined && spec.warmupSec > 0) await cannon(spec, { durationSec: spec.warmupSec });
  const cpu0 = cpuMsOf(spec.serverPids);
  const extra0 = spec.extraTreePid ? cpuTreeMs(spec.extraTreePid) : 0;
  const self0 = process.cpuUsage();
  const t0 = performance.now();
  const result = await cannon(spec, { durationSec: spec.durationSec, ...(spec.amount === undefined ? {} : { amount: spec.amount }) });
  const elapsedMs = performance.now() - t0;
  return toHttpResult(result, {
    durationSec: spec.amount === undefined ? result.duration : elapsedMs / 1000,
    serverCpuMs: cpuMsOf(spec.serverPids) - cpu0,
    extraCpuMs: spec.extraTreePid ? cpuTreeMs(spec.extraTreePid) - extra0 : 0,
    loaderCpuPct: loaderPct(self0, t0),
  });
}

/**
 * Two loads at once, one per server, for the same duration: both servers share one core, so
 * whatever else the machine does at that moment slows both alike and their req/s ratio is the
 * ratio of their CPU cost per request. Warm-ups run together too. One process generates both
 * loads, so its CPU share is reported on both results.
 */
async function runPair(a: HttpSpec, b: HttpSpec): Promise<[HttpResult, HttpResult]> {
  if (a.warmupSec > 0) {
    await Promise.all([cannon(a, { durationSec: a.warmupSec }), cannon(b, { durationSec: b.warmupSec })]);
  }
  const self0 = process.cpuUsage();
  const t0 = performance.now();
  const measure = async (spec: HttpSpec) => {
    const cpu0 = cpuMsOf(spec.serverPids);
    const result = await cannon(spec, { durationSec: spec.durationSec });
    return { result, serverCpuMs: cpuMsOf(spec.serverPids) - cpu0 };
  };
  const [ra, rb] = await Promise.all([measure(a), measure(b)]);
  const loaderCpuPct = loaderPct(self0, t0);
  const finish = (r: typeof ra) =>
    toHttpResult(r.result, { durationSec: r.result.duration, serverCpuMs: r.serverCpuMs, extraCpuMs: 0, loaderCpuPct });
  return [finish(ra), finish(rb)];
}

// ---- streaming clients ------------------------------------------------------------------------

const MARKER = /bench:(\d+):(\d+)/g;
const sentAt = new Map<string, number>();
/** When the POST that created the event answered (after commit, so after the NOTIFY). */
const doneAt = new Map<string, number>();
const received = { ws: [] as Array<{ key: string; at: number }>, sse: [] as Array<{ key: string; at: number }> };
const sockets: WebSocket[] = [];
const sseRequests: http.ClientRequest[] = [];
const agent = new http.Agent({ keepAlive: false, maxSockets: Number.POSITIVE_INFINITY });

function record(kind: "ws" | "sse", text: string): void {
  const at = performance.now();
  for (const match of text.matchAll(MARKER)) received[kind].push({ key: `${match[1]}:${match[2]}`, at });
}

function openWs(baseUrl: string, sub: { token: string; taskId: string }): Promise<void> {
  return new Promise((resolve, reject) => {
    const url = `${baseUrl.replace(/^http/, "ws")}/api/ws?token=${encodeURIComponent(sub.token)}`;
    const ws = new WebSocket(url, { perMessageDeflate: false });
    let settled = false;
    const fail = (error: Error) => {
      if (settled) return;
      settled = true;
      ws.terminate();
      reject(error);
    };
    ws.on("error", fail);
    ws.on("unexpected-response", (_req, res) => fail(new Error(`upgrade refused: HTTP ${res.statusCode}`)));
    ws.on("open", () => ws.send(JSON.stringify({ type: "subscribe", taskId: sub.taskId })));
    ws.on("message", (data) => {
      const text = data.toString();
      if (!settled) {
        if (text.includes('"type":"subscribed"')) {
          settled = true;
          sockets.push(ws);
          resolve();
        } else if (text.includes('"type":"error"')) {
          fail(new Error(`subscribe refused: ${text.slice(0, 200)}`));
        }
        return;
      }
      if (text.includes('"type":"event"')) record("ws", text);
    });
    setTimeout(() => fail(new Error("websocket open timed out")), 30_000).unref();
  });
}

function openSse(baseUrl: string, sub: { token: string; taskId: string }): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = http.get(
      `${baseUrl}/api/tasks/${encodeURIComponent(sub.taskId)}/stream`,
      { agent, headers: { authorization: `Bearer ${sub.token}`, accept: "text/event-stream" } },
      (res) => {
        if (res.statusCode !== 200) {
          res.resume();
          reject(new Error(`SSE refused: HTTP ${res.statusCode}`));
          return;
        }
        res.setEncoding("utf8");
        let buffer = "";
        res.on("data", (chunk: string) => {
          buffer += chunk;
          const end = buffer.lastIndexOf("\n\n");
          if (end < 0) return;
          const complete = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          if (complete.includes("message.created")) record("sse", complete);
        });
        res.on("error", () => undefined);
        sseRequests.push(req);
        resolve();
      },
    );
    req.on("error", reject);
    req.setTimeout(30_000, () => req.destroy(new Error("SSE open timed out")));
  });
}

async function openStreams(spec: StreamsSpec, kind: "ws" | "sse"): Promise<StreamsOpened> {
  const total = kind === "ws" ? spec.ws : spec.sse;
  const t0 = performance.now();
  let opened = 0;
  let failed = 0;
  let firstError: string | undefined;
  let index = 0;
  const worker = async () => {
    for (;;) {
      const i = index;
      index += 1;
      if (i >= total) return;
      const sub = spec.subscribers[i % spec.subscribers.length] as { token: string; taskId: string };
      try {
        await (kind === "ws" ? openWs(spec.baseUrl, sub) : openSse(spec.baseUrl, sub));
        opened += 1;
      } catch (error) {
        failed += 1;
        firstError ??= (error as Error).message;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, spec.batch) }, worker));
  // SSE sockets: the idle timeout of a long-lived stream must not end it during the run.
  for (const req of sseRequests) req.setTimeout(0);
  return { kind, opened, failed, ...(firstError ? { firstError } : {}), elapsedMs: performance.now() - t0 };
}

function summary(entries: Array<{ key: string; at: number }>, expected: number): LatencySummary {
  const values: number[] = [];
  const afterCommit: number[] = [];
  for (const { key, at } of entries) {
    const sent = sentAt.get(key);
    const done = doneAt.get(key);
    if (sent !== undefined) values.push(at - sent);
    if (done !== undefined) afterCommit.push(at - done);
  }
  return {
    received: values.length,
    expected,
    p50: percentile(values, 50),
    p99: percentile(values, 99),
    max: values.length ? Math.max(...values) : Number.NaN,
    afterCommitP50: percentile(afterCommit, 50),
    afterCommitP99: percentile(afterCommit, 99),
  };
}

async function publish(spec: PublishSpec): Promise<PublishResult> {
  received.ws.length = 0;
  received.sse.length = 0;
  sentAt.clear();
  doneAt.clear();
  let posts = 0;
  let postNon2xx = 0;
  const postMs: number[] = [];
  for (let round = 0; round < spec.rounds; round += 1) {
    const started = performance.now();
    await Promise.all(
      spec.targets.map(async (target, i) => {
        const key = `${round}:${i}`;
        sentAt.set(key, performance.now());
        posts += 1;
        try {
          const res = await fetch(`${spec.baseUrl}/api/tasks/${encodeURIComponent(target.taskId)}/messages`, {
            method: "POST",
            headers: { authorization: `Bearer ${target.token}`, "content-type": "application/json" },
            body: JSON.stringify({ text: `bench:${key}` }),
          });
          await res.arrayBuffer();
          doneAt.set(key, performance.now());
          postMs.push((doneAt.get(key) as number) - (sentAt.get(key) as number));
          if (res.status < 200 || res.status > 299) postNon2xx += 1;
        } catch {
          postNon2xx += 1;
        }
      }),
    );
    const wait = spec.intervalMs - (performance.now() - started);
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  }
  await new Promise((r) => setTimeout(r, spec.settleMs));
  // Every socket follows one task, and each round posts once to every task: one delivery per socket per round.
  return {
    posts,
    postNon2xx,
    postMs: { p50: percentile(postMs, 50), p99: percentile(postMs, 99) },
    ws: summary(received.ws, sockets.length * spec.rounds),
    sse: summary(received.sse, sseRequests.length * spec.rounds),
  };
}

function closeStreams(): { closed: number } {
  const closed = sockets.length + sseRequests.length;
  for (const ws of sockets.splice(0)) ws.terminate();
  for (const req of sseRequests.splice(0)) req.destroy();
  return { closed };
}

async function handle(command: Command): Promise<unknown> {
  switch (command.cmd) {
    case "pool":
      pools.set(command.name, command.values);
      return { size: command.values.length };
    case "http-pair":
      return runPair(command.a, command.b);
    case "http":
      return runHttp(command.spec);
    case "open-streams":
      return openStreams(command.spec, command.kind);
    case "publish":
      return publish(command.spec);
    case "close-streams":
      return closeStreams();
  }
}

process.on("message", (message: Command) => {
  handle(message).then(
    (result) => process.send?.({ id: message.id, ok: true, result } satisfies Reply),
    (error: unknown) => process.send?.({ id: message.id, ok: false, error: (error as Error).stack ?? String(error) } satisfies Reply),
  );
});
process.on("disconnect", () => process.exit(0));
process.send?.({ id: 0, ok: true, result: "ready" } satisfies Reply);
