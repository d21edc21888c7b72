import { randomBytes } from "node:crypto";
import net from "node:net";
import type { TaskEventView } from "@app/contracts";
import type { Response as ExpressResponse } from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventJson } from "../src/events/event-json.js";
import { countEvents, eventually, parseSse, startTestApi, type TestApi } from "./helpers.js";

// Resumes of paused readers hold at most their stream's buffer budget each (the page read from the
// database included), and all of them together at most the instance's resume budget: the others
// wait for room, and one that waits too long gets `resync`. The bounds are asserted on the bytes
// the process holds for the streams (unsent bytes and pages read), not on timings.
const BUDGET = 64 * 1024;
const SLOTS = 4;
/** Events large enough that a backlog is far beyond what loopback socket buffers absorb. */
const EVENT_CHARS = 128 * 1024;
const EVENTS = 60;
/** One event's JSON: its text plus the id, type and timestamp around it. */
const EVENT_BYTES = EVENT_CHARS + 400;

type User = Awaited<ReturnType<TestApi["user"]>>;

/** A running API whose SSE responses and backlog pages are recorded. */
async function instrumented(env: Record<string, string>) {
  const t = await startTestApi({ env: { SSE_MAX_BUFFERED_BYTES: String(BUDGET), MAX_STREAMS_PER_USER: "50", ...env } });
  const responses: ExpressResponse[] = [];
  const open = t.api.sse.open.bind(t.api.sse);
  t.api.sse.open = (res, options) => {
    responses.push(res);
    return open(res, options);
  };
  const pages: number[] = [];
  /** The task of each page read, in order. */
  const pageTasks: string[] = [];
  const backlog = t.api.bus.backlog.bind(t.api.bus);
  t.api.bus.backlog = async (...args: Parameters<typeof backlog>) => {
    const page = await backlog(...args);
    pages.push(page.reduce((n: number, e: TaskEventView) => n + Buffer.byteLength(eventJson(e)), 0));
    pageTasks.push(args[0]);
    return page;
  };
  return { t, responses, pages, pageTasks };
}

async function taskWithBacklog(t: TestApi, u: User, events: number): Promise<{ taskId: string; ids: string[] }> {
  const res = await fetch(`${t.url}/api/tasks`, {
    method: "POST",
    headers: { ...u.auth, "content-type": "application/json" },
    body: JSON.stringify({ title: "backlog" }),
  });
  const taskId = ((await res.json()) as { data: { id: string } }).data.id;
  const ids: string[] = [];
  for (let n = 0; n < events; n += 1) {
    const e = await t.db.prisma.$transaction((tx) =>
      t.api.bus.append(tx, { taskId, userId: u.id, type: "message.created", data: { n, text: "x".repeat(EVENT_CHARS) } }),
    );
    ids.push(e.id ?? "");
  }
  return { taskId, ids };
}

/** A raw client resuming from the start that reads nothing until `resume()`. */
async function pausedResume(t: TestApi, u: User, taskId: string) {
  const socket = net.connect(Number(new URL(t.url).port), "127.0.0.1");
  const chunks: Buffer[] = [];
  const received = countEvents();
  socket.on("data", (c: Buffer) => {
    chunks.push(c);
    received.add(c);
  });
  socket.on("error", () => undefined);
  await new Promise<void>((resolve) => socket.once("connect", resolve));
  socket.pause();
  socket.write(
    `GET /api/tasks/${taskId}/stream HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${u.token}\r\nLast-Event-ID: 0\r\n\r\n`,
  );
  return { socket, events: () => received.count, text: () => Buffer.concat(chunks).toString("utf8") };
}

describe("the resume budget", () => {
  let run: Awaited<ReturnType<typeof instrumented>>;
  beforeAll(async () => {
    run = await instrumented({ RESUME_MAX_BYTES: String(SLOTS * BUDGET), RESUME_MAX_WAIT_MS: "60000" });
  });
  afterAll(async () => {
    await run?.t.close();
  });

  it("holds each paused resume to its stream budget and all of them to the instance budget, then delivers everything", async () => {
    const { t, responses, pages } = run;
    const users = await Promise.all([t.user(), t.user(), t.user()]);
    const tasks = await Promise.all(users.map((u) => taskWithBacklog(t, u, EVENTS)));
    const clients = [];
    for (const [i, u] of users.entries()) {
      const task = tasks[i];
      if (!task) throw new Error("task missing");
      for (let s = 0; s < 4; s += 1) clients.push({ task, client: await pausedResume(t, u, task.taskId) });
    }
    await eventually(() => responses.length === clients.length, 10_000);
    // As many catch-ups as the instance budget has room for fill their budgets...
    const held = () => responses.map((r) => r.writableLength);
    await eventually(() => held().filter((n) => n >= BUDGET).length >= SLOTS, 10_000);
    for (let sample = 0; sample < 20; sample += 1) {
      const now = held();
      // ...each within its budget plus the one event that crossed it; the rest wait with nothing.
      for (const n of now) expect(n).toBeLessThanOrEqual(BUDGET + EVENT_BYTES);
      expect(now.filter((n) => n > 1024).length).toBeLessThanOrEqual(SLOTS);
      expect(now.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(SLOTS * (BUDGET + EVENT_BYTES) + clients.length * 1024);
      await new Promise((r) => setTimeout(r, 50));
    }
    // No page read from the database holds more than a stream's budget plus one event.
    expect(Math.max(...pages)).toBeLessThanOrEqual(BUDGET + EVENT_BYTES);
    // Another user is served meanwhile.
    const other = await t.user();
    expect((await fetch(`${t.url}/api/tasks`, { headers: other.auth })).status).toBe(200);

    for (const { client } of clients) client.socket.resume();
    for (const { task, client } of clients) {
      await eventually(() => client.events() >= EVENTS, 30_000);
      const ids = [...client.text().matchAll(/^id: (\d+)$/gm)].map((m) => m[1]);
      expect(ids).toEqual(task.ids);
      client.socket.destroy();
    }
  }, 90_000);
});

describe("a resume that finds no room in time", () => {
  let run: Awaited<ReturnType<typeof instrumented>>;
  beforeAll(async () => {
    run = await instrumented({ RESUME_MAX_BYTES: String(BUDGET), RESUME_MAX_WAIT_MS: "300" });
  });
  afterAll(async () => {
    await run?.t.close();
  });

  it("gets resync at the newest id instead of the backlog, then continues live", async () => {
    const { t, responses } = run;
    const u = await t.user();
    const { taskId, ids } = await taskWithBacklog(t, u, EVENTS);
    const holder = await pausedResume(t, u, taskId);
    await eventually(() => responses[0] && responses[0].writableLength >= BUDGET, 10_000);

    const res = await fetch(`${t.url}/api/tasks/${taskId}/stream`, { headers: { ...u.auth, "last-event-id": "0" } });
    expect(res.status).toBe(200);
    const reader = res.body?.getReader();
    if (!reader) throw new Error("no body");
    let text = "";
    const decoder = new TextDecoder();
    const readUntil = async (marker: string) => {
      while (!text.includes(marker)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`stream ended before ${marker}`);
        text += decoder.decode(value, { stream: true });
      }
    };
    await readUntil("event: resync");
    const live = await t.db.prisma.$transaction((tx) =>
      t.api.bus.append(tx, { taskId, userId: u.id, type: "message.created", data: { text: "live" } }),
    );
    await readUntil("event: message.created");
    await reader.cancel();
    const events = parseSse(text);
    expect(events.map((e) => e.event)).toEqual(["resync", "message.created"]);
    expect(events[0]?.id).toBe(ids.at(-1));
    expect(JSON.parse(events[0]?.data ?? "{}")).toMatchObject({ reason: expect.stringMatching(/too many resumes/) });
    expect(events[1]?.id).toBe(live.id);
    holder.socket.destroy();
  }, 30_000);
});

/** A masked client text frame (payload under 126 bytes). */
function textFrame(text: string): Buffer {
  const payload = Buffer.from(text);
  const mask = randomBytes(4);
  const masked = Buffer.from(payload.map((b, i) => b ^ (mask[i % 4] ?? 0)));
  return Buffer.concat([Buffer.from([0x81, 0x80 | payload.length]), mask, masked]);
}

describe("WebSocket resumes", () => {
  let run: Awaited<ReturnType<typeof instrumented>>;
  beforeAll(async () => {
    run = await instrumented({ WS_MAX_BUFFERED_BYTES: String(BUDGET), RESUME_MAX_BYTES: String(64 * BUDGET) });
  });
  afterAll(async () => {
    await run?.t.close();
  });

  it("catch up one subscription of a socket at a time, each page within the socket's budget, then deliver everything", async () => {
    const { t, pages, pageTasks } = run;
    const u = await t.user();
    const tasks = await Promise.all([1, 2, 3, 4].map(() => taskWithBacklog(t, u, EVENTS)));
    const socket = net.connect(Number(new URL(t.url).port), "127.0.0.1");
    const events = countEvents('"type":"event"');
    let head = "";
    socket.on("data", (c: Buffer) => {
      if (head.length < 4096) head += c.toString("latin1");
      events.add(c);
    });
    await new Promise<void>((resolve) => socket.once("connect", resolve));
    socket.write(
      `GET /api/ws?token=${u.token} HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
        `Sec-WebSocket-Key: ${randomBytes(16).toString("base64")}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
    );
    try {
      await eventually(() => head.includes('"type":"ready"'));
      socket.pause();
      const before = pageTasks.length;
      for (const { taskId } of tasks) socket.write(textFrame(JSON.stringify({ type: "subscribe", taskId, lastEventId: "0" })));
      // The first subscription's catch-up fills the socket and stalls; the others wait their turn.
      await eventually(() => pageTasks.length - before >= 3, 10_000);
      for (let sample = 0; sample < 20; sample += 1) {
        expect(new Set(pageTasks.slice(before)).size).toBe(1);
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(Math.max(...pages.slice(before))).toBeLessThanOrEqual(BUDGET + EVENT_BYTES);
      socket.resume();
      await eventually(() => events.count >= tasks.length * EVENTS, 60_000);
      expect(new Set(pageTasks.slice(before))).toEqual(new Set(tasks.map((x) => x.taskId)));
    } finally {
      socket.destroy();
    }
  }, 90_000);
});
