import { cpuMs, rssKiB } from "../proc.js";
import type { PublishResult, StreamsOpened, Subscriber } from "../protocol.js";
import { type Ctx, sleep } from "./context.js";

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
