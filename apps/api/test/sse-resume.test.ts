import net from "node:net";
import type { Response as ExpressResponse } from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { countEvents, eventually, parseSse, readSse, startTestApi, type TestApi } from "./helpers.js";

// Resuming an SSE stream replays the stored backlog page by page, paced by the reader's socket,
// and a resume point deeper than SSE_MAX_RESUME_EVENTS gets `event: resync` instead.
const BUDGET = 64 * 1024;
const MAX_RESUME = 80;
/** Event payloads large enough that the backlog is far beyond what loopback socket buffers absorb. */
const EVENT_BYTES = 256 * 1024;
const BIG_EVENTS = 70;

let t: TestApi;
/** Responses of SSE streams opened by the API, to read their unsent byte count. */
const responses: ExpressResponse[] = [];
beforeAll(async () => {
  t = await startTestApi({ env: { SSE_MAX_BUFFERED_BYTES: String(BUDGET), SSE_MAX_RESUME_EVENTS: String(MAX_RESUME) } });
  const open = t.api.sse.open.bind(t.api.sse);
  t.api.sse.open = (res, options) => {
    responses.push(res);
    return open(res, options);
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

describe("SSE resume", () => {
  it("replays a backlog of exactly the cap in order", async () => {
    const u = await t.user();
    const taskId = await newTask(u.auth);
    const ids = await storeEvents(taskId, u.id, MAX_RESUME);
    const res = await fetch(`${t.url}/api/tasks/${taskId}/stream`, { headers: { ...u.auth, "last-event-id": "0" } });
    const { events } = await readSse(res, (e) => e.length >= MAX_RESUME);
    expect(events.map((e) => e.id)).toEqual(ids);
    expect(events.some((e) => e.event === "resync")).toBe(false);
  });

  it("answers a resume point deeper than the cap with one resync event at the newest id, then continues live", async () => {
    const u = await t.user();
    const taskId = await newTask(u.auth);
    const ids = await storeEvents(taskId, u.id, MAX_RESUME + 5);
    const res = await fetch(`${t.url}/api/tasks/${taskId}/stream`, { headers: { ...u.auth, "last-event-id": "0" } });
    expect(res.status).toBe(200);
    const reading = readSse(res, (e) => e.some((x) => x.event === "message.created"));
    await eventually(() => t.api.bus.listenerCount() > 0);
    const [live] = await storeEvents(taskId, u.id, 1);
    const { events } = await reading;
    expect(events.map((e) => e.event)).toEqual(["resync", "message.created"]);
    expect(events[0]?.id).toBe(ids.at(-1));
    expect(JSON.parse(events[0]?.data ?? "{}")).toMatchObject({ lastEventId: ids.at(-1) });
    expect(events[1]?.id).toBe(live);
  });

  it("paces a slow reader's catch-up under SSE_MAX_BUFFERED_BYTES, holds no pool connection meanwhile, and delivers everything once it reads", async () => {
    const u = await t.user();
    const taskId = await newTask(u.auth);
    const ids = await storeEvents(taskId, u.id, BIG_EVENTS, EVENT_BYTES);
    const before = responses.length;
    const socket = net.connect(Number(new URL(t.url).port), "127.0.0.1");
    const chunks: Buffer[] = [];
    // Counted as they arrive: parsing the whole transcript on every poll would cost more than the server's work.
    const arrived = countEvents();
    socket.on("data", (c: Buffer) => {
      chunks.push(c);
      arrived.add(c);
    });
    await new Promise<void>((resolve) => socket.once("connect", resolve));
    // Never reads: the kernel buffers fill, then the server's.
    socket.pause();
    socket.write(
      `GET /api/tasks/${taskId}/stream HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${u.token}\r\nLast-Event-ID: 0\r\n\r\n`,
    );
    try {
      const res = await eventually(() => responses[before]);
      // The catch-up stalls with unsent bytes in the process...
      await eventually(() => res.writableLength > 0, 10_000);
      let peak = 0;
      for (let i = 0; i < 20; i += 1) {
        peak = Math.max(peak, res.writableLength);
        // ...and between its paged queries no pool connection is checked out.
        expect(t.db.pool.totalCount - t.db.pool.idleCount).toBe(0);
        await new Promise((r) => setTimeout(r, 50));
      }
      // At most the budget plus the one event written when the buffer was last under it.
      expect(peak).toBeLessThanOrEqual(BUDGET + EVENT_BYTES + 1024);
      expect(res.writableEnded).toBe(false);
      socket.resume();
      await eventually(() => arrived.count >= BIG_EVENTS, 30_000);
      const received = parseSse(Buffer.concat(chunks).toString("utf8"));
      expect(received.map((e) => e.id)).toEqual(ids);
    } finally {
      socket.destroy();
    }
  }, 60_000);
});
