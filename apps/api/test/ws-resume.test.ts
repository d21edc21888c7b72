import { once } from "node:events";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { eventually, startTestApi, type TestApi } from "./helpers.js";

// WebSocket resume (`lastEventId`): the backlog is paced by the reader's socket and a resume point
// deeper than SSE_MAX_RESUME_EVENTS gets an `error` with code `resync` instead of the backlog.
const BUDGET = 64 * 1024;
const MAX_RESUME = 80;
const EVENT_BYTES = 256 * 1024;
const BIG_EVENTS = 70;

let t: TestApi;
/** Server side of the sockets the API accepted, to read their unsent byte count. */
const accepted: WebSocket[] = [];
beforeAll(async () => {
  t = await startTestApi({ env: { WS_MAX_BUFFERED_BYTES: String(BUDGET), SSE_MAX_RESUME_EVENTS: String(MAX_RESUME) } });
  const accept = t.api.ws.accept.bind(t.api.ws);
  t.api.ws.accept = (ws, auth) => {
    accepted.push(ws);
    accept(ws, auth);
  };
});
afterAll(async () => {
  await t?.close();
});

async function newTask(auth: Record<string, string>): Promise<string> {
  const res = await fetch(`${t.url}/api/tasks`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({ title: "resume" }),
  });
  return ((await res.json()) as { data: { id: string } }).data.id;
}

async function storeEvents(taskId: string, userId: string, count: number, bytes = 10): Promise<string[]> {
  const ids: string[] = [];
  for (let n = 0; n < count; n += 1) {
    const e = await t.db.prisma.$transaction((tx) =>
      t.api.bus.append(tx, { taskId, userId, type: "message.created", data: { n, text: "x".repeat(bytes) } }),
    );
    ids.push(e.id ?? "");
  }
  return ids;
}

type Msg = { type: string; code?: string; taskId?: string; event?: { id: string } };

async function socket(token: string): Promise<{ ws: WebSocket; messages: Msg[] }> {
  const ws = new WebSocket(`${t.url.replace("http", "ws")}/api/ws?token=${token}`);
  const messages: Msg[] = [];
  ws.on("message", (data) => messages.push(JSON.parse(String(data)) as Msg));
  await once(ws, "open");
  return { ws, messages };
}

describe("WebSocket resume", () => {
  it("answers a lastEventId deeper than the cap with subscribed, then an error resync, then live events", async () => {
    const u = await t.user();
    const taskId = await newTask(u.auth);
    await storeEvents(taskId, u.id, MAX_RESUME + 1);
    const { ws, messages } = await socket(u.token);
    ws.send(JSON.stringify({ type: "subscribe", taskId, lastEventId: "0" }));
    await eventually(() => messages.find((m) => m.code === "resync"));
    const [live] = await storeEvents(taskId, u.id, 1);
    await eventually(() => messages.find((m) => m.type === "event"));
    expect(messages.filter((m) => m.type !== "ready").map((m) => m.code ?? m.type)).toEqual(["subscribed", "resync", "event"]);
    expect(messages.find((m) => m.type === "event")?.event?.id).toBe(live);
    ws.close();
  });

  it("paces a slow reader's catch-up under WS_MAX_BUFFERED_BYTES instead of closing it, and delivers everything once it reads", async () => {
    const u = await t.user();
    const taskId = await newTask(u.auth);
    const ids = await storeEvents(taskId, u.id, BIG_EVENTS, EVENT_BYTES);
    const before = accepted.length;
    const { ws, messages } = await socket(u.token);
    const server = await eventually(() => accepted[before]);
    ws.pause();
    ws.send(JSON.stringify({ type: "subscribe", taskId, lastEventId: "0" }));
    await eventually(() => server.bufferedAmount > 0, 10_000);
    let peak = 0;
    for (let i = 0; i < 20; i += 1) {
      peak = Math.max(peak, server.bufferedAmount);
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(peak).toBeLessThanOrEqual(BUDGET + EVENT_BYTES + 1024);
    expect(server.readyState).toBe(WebSocket.OPEN);
    ws.resume();
    await eventually(() => messages.filter((m) => m.type === "event").length >= BIG_EVENTS, 20_000);
    expect(messages.filter((m) => m.type === "event").map((m) => m.event?.id)).toEqual(ids);
    ws.close();
  }, 60_000);
});
