import { once } from "node:events";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { MAX_SUBSCRIPTIONS } from "../src/events/ws-hub.js";
import { rateLimitRefusals } from "../src/metrics.js";
import { eventually, startTestApi, type TestApi } from "./helpers.js";

// api_rate_limit_refusals_total counts what a user's limits refuse, by limiter, as the API answers
// it: a stream over the per-user cap (HTTP 429) and a socket's subscription over its cap (a
// `rate_limited` message). Read from prom-client's registry in this process, which the API shares.
let t: TestApi;
beforeAll(async () => {
  t = await startTestApi({ env: { MAX_STREAMS_PER_USER: "1" } });
});
afterAll(async () => {
  await t?.close();
});

const refusals = async (limiter: string) => (await rateLimitRefusals.get()).values.find((v) => v.labels.limiter === limiter)?.value;

async function newTask(auth: Record<string, string>): Promise<string> {
  const res = await fetch(`${t.url}/api/tasks`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({ title: "refusals" }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { data: { id: string } }).data.id;
}

describe("api_rate_limit_refusals_total", () => {
  it("exists at 0 for every limiter before any refusal", async () => {
    for (const limiter of ["streams", "sockets", "generations", "mcp-requests", "mcp-tool-calls", "ws-subscriptions"])
      expect(await refusals(limiter), limiter).toBeGreaterThanOrEqual(0);
  });

  it("counts a stream refused over MAX_STREAMS_PER_USER (429) under `streams`", async () => {
    const u = await t.user();
    const taskId = await newTask(u.auth);
    const before = (await refusals("streams")) ?? 0;
    const held = await fetch(`${t.url}/api/tasks/${taskId}/stream`, { headers: u.auth });
    expect(held.status).toBe(200);
    expect((await fetch(`${t.url}/api/tasks/${taskId}/stream`, { headers: u.auth })).status).toBe(429);
    expect(await refusals("streams")).toBe(before + 1);
    await held.body?.cancel();
    await eventually(() => t.api.caps.localCount("streams", u.id) === 0);
  });

  it("counts a subscription refused over a socket's MAX_SUBSCRIPTIONS under `ws-subscriptions`", async () => {
    const u = await t.user();
    const tasks: string[] = [];
    for (let i = 0; i <= MAX_SUBSCRIPTIONS; i += 1) tasks.push(await newTask(u.auth));
    const before = (await refusals("ws-subscriptions")) ?? 0;
    const ws = new WebSocket(`${t.url.replace("http", "ws")}/api/ws?token=${u.token}`);
    const messages: { type: string; code?: string; taskId?: string }[] = [];
    ws.on("message", (data) => messages.push(JSON.parse(String(data))));
    await once(ws, "open");
    try {
      for (const taskId of tasks.slice(0, MAX_SUBSCRIPTIONS)) ws.send(JSON.stringify({ type: "subscribe", taskId }));
      await eventually(() => messages.filter((m) => m.type === "subscribed").length === MAX_SUBSCRIPTIONS, 15_000);
      const last = tasks[MAX_SUBSCRIPTIONS];
      ws.send(JSON.stringify({ type: "subscribe", taskId: last }));
      await eventually(() => messages.find((m) => m.type === "error" && m.taskId === last));
      expect(messages.find((m) => m.taskId === last)).toMatchObject({ code: "rate_limited" });
      expect(await refusals("ws-subscriptions")).toBe(before + 1);
    } finally {
      ws.close();
    }
  }, 30_000);
});
