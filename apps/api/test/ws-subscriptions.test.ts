import { once } from "node:events";
import { TASK_EVENT_TYPES } from "@app/contracts";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import WebSocket from "ws";
import type { TaskListener } from "../src/events/bus.js";
import { ManualExpiry } from "./fixtures/manual-expiry.js";
import { eventually, readSse, startTestApi, type TestApi } from "./helpers.js";

const expiry = new ManualExpiry();
let t: TestApi;
beforeAll(async () => {
  t = await startTestApi({ deps: { expiry } });
});
afterAll(async () => {
  await t?.close();
});

type Msg = { type: string; taskId?: string; event?: { taskId: string; data: { text: string } } };

async function newTask(auth: Record<string, string>): Promise<string> {
  const res = await fetch(`${t.url}/api/tasks`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({ title: "t" }),
  });
  return ((await res.json()) as { data: { id: string } }).data.id;
}

const postMessage = (auth: Record<string, string>, taskId: string, text: string) =>
  fetch(`${t.url}/api/tasks/${taskId}/messages`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({ text }),
  });

async function socket(token: string): Promise<{ ws: WebSocket; messages: Msg[] }> {
  const ws = new WebSocket(`${t.url.replace("http", "ws")}/api/ws?token=${token}`);
  const messages: Msg[] = [];
  ws.on("message", (data) => messages.push(JSON.parse(String(data)) as Msg));
  await once(ws, "open");
  return { ws, messages };
}

describe("WebSocket subscriptions", () => {
  it("five concurrent subscribes to one task hold one feed; after unsubscribe no event arrives and no listener is left", async () => {
    const u = await t.user();
    const taskId = await newTask(u.auth);
    const sentinel = await newTask(u.auth);
    const baseline = t.api.bus.listenerCount();
    const { ws, messages } = await socket(u.token);
    for (let i = 0; i < 5; i += 1) ws.send(JSON.stringify({ type: "subscribe", taskId }));
    await eventually(() => messages.filter((m) => m.type === "subscribed" && m.taskId === taskId).length === 5);
    expect(t.api.bus.listenerCount()).toBe(baseline + 1);
    ws.send(JSON.stringify({ type: "unsubscribe", taskId }));
    await eventually(() => messages.find((m) => m.type === "unsubscribed"));
    expect(t.api.bus.listenerCount()).toBe(baseline);

    // Events are dispatched in announcement order: once the sentinel's event is here, the
    // unsubscribed task's earlier one would have been too.
    await postMessage(u.auth, taskId, "after unsubscribe");
    ws.send(JSON.stringify({ type: "subscribe", taskId: sentinel }));
    await eventually(() => messages.find((m) => m.type === "subscribed" && m.taskId === sentinel));
    await postMessage(u.auth, sentinel, "sentinel");
    await eventually(() => messages.find((m) => m.type === "event" && m.event?.taskId === sentinel));
    expect(messages.filter((m) => m.type === "event" && m.event?.taskId === taskId)).toEqual([]);
    ws.close();
    await eventually(() => t.api.bus.listenerCount() === baseline);
  });

  it("a subscribe still in flight when the socket closes leaves no listener behind", async () => {
    const u = await t.user();
    const taskId = await newTask(u.auth);
    const baseline = t.api.bus.listenerCount();
    const sockets = t.api.ws.size;
    const original = t.api.bus.subscribe.bind(t.api.bus);
    let entered: () => void = () => undefined;
    const inFlight = new Promise<void>((resolve) => {
      entered = resolve;
    });
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let finished = 0;
    const spy = vi.spyOn(t.api.bus, "subscribe").mockImplementation(async (id: string, listener: TaskListener) => {
      entered();
      await gate;
      try {
        return await original(id, listener);
      } finally {
        finished += 1;
      }
    });
    try {
      const { ws } = await socket(u.token);
      ws.send(JSON.stringify({ type: "subscribe", taskId }));
      await inFlight;
      ws.close();
      await eventually(() => t.api.ws.size === sockets);
      release();
      await eventually(() => finished === 1);
      await eventually(() => t.api.bus.listenerCount() === baseline);
      expect(t.api.bus.listenerCount()).toBe(baseline);
    } finally {
      spy.mockRestore();
    }
  });

  it("serializes each event once, however many sockets and streams receive it", async () => {
    const u = await t.user();
    const taskId = await newTask(u.auth);
    const sockets = await Promise.all([socket(u.token), socket(u.token), socket(u.token)]);
    for (const { ws } of sockets) ws.send(JSON.stringify({ type: "subscribe", taskId }));
    await eventually(() => sockets.every(({ messages }) => messages.some((m) => m.type === "subscribed")));
    const streams = await Promise.all([1, 2].map(() => fetch(`${t.url}/api/tasks/${taskId}/stream`, { headers: u.auth })));
    const baseline = t.api.bus.listenerCount();
    expect(baseline).toBeGreaterThanOrEqual(5);
    const reading = streams.map((s) => readSse(s, (events) => events.some((e) => e.event === "message.created")));
    const isEvent = (value: unknown): boolean => {
      const v = value as { type?: unknown; taskId?: unknown; event?: unknown; createdAt?: unknown } | null;
      if (typeof v !== "object" || v === null) return false;
      if (v.type === "event") return isEvent(v.event);
      return v.taskId === taskId && "createdAt" in v && (TASK_EVENT_TYPES as readonly unknown[]).includes(v.type);
    };
    const stringify = vi.spyOn(JSON, "stringify");
    try {
      await postMessage(u.auth, taskId, "fan out");
      await eventually(() => sockets.every(({ messages }) => messages.some((m) => m.type === "event")));
      await Promise.all(reading);
      expect(stringify.mock.calls.filter(([value]) => isEvent(value))).toHaveLength(1);
    } finally {
      stringify.mockRestore();
      for (const { ws } of sockets) ws.close();
    }
  });
});

describe("token expiry", () => {
  it("closes a socket with 4001 when its token expires, and cancels the timer when it closes first", async () => {
    const u = await t.user();
    const exp = Math.floor(Date.now() / 1000) + 3600;
    const token = await t.stub.mint(u, { exp });
    const before = expiry.scheduled.length;
    const { ws } = await socket(token);
    await eventually(() => expiry.scheduled.length === before + 1);
    const entry = expiry.scheduled.at(-1);
    expect(entry?.atMs).toBe(exp * 1000);
    const closed = once(ws, "close");
    expect(expiry.fire(exp * 1000)).toBeGreaterThanOrEqual(1);
    const [code, reason] = (await closed) as [number, Buffer];
    expect([code, String(reason)]).toEqual([4001, "token expired"]);

    const other = await socket(u.token);
    await eventually(() => expiry.scheduled.length === before + 2);
    other.ws.close();
    await eventually(() => expiry.scheduled.at(-1)?.cancelled === true);
  });

  it("ends an SSE stream with a token-expired event when its token expires", async () => {
    const u = await t.user();
    const exp = Math.floor(Date.now() / 1000) + 3600;
    const token = await t.stub.mint(u, { exp });
    const taskId = await newTask(u.auth);
    const before = expiry.scheduled.length;
    const stream = await fetch(`${t.url}/api/tasks/${taskId}/stream`, { headers: { authorization: `Bearer ${token}` } });
    expect(stream.status).toBe(200);
    const reading = readSse(stream, (events) => events.some((e) => e.event === "token-expired"));
    await eventually(() => expiry.scheduled.length === before + 1);
    expect(expiry.scheduled.at(-1)?.atMs).toBe(exp * 1000);
    expiry.fire(exp * 1000);
    const { events, raw } = await reading;
    expect(events.at(-1)?.event).toBe("token-expired");
    expect(raw).not.toContain("shutdown");
    await eventually(() => t.api.sse.size === 0);
  });
});
