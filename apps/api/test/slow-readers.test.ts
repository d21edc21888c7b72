import { randomBytes } from "node:crypto";
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import WebSocket from "ws";
import { SLOW_CLOSE } from "../src/events/ws-hub.js";
import { eventually, startTestApi, type TestApi } from "./helpers.js";

const THRESHOLD = 64 * 1024;
/** Size of each event's payload: a few of them fill the kernel's socket buffers. */
const EVENT_BYTES = 256 * 1024;
/** Upper bound of events produced (far beyond any loopback buffering) so a regression fails instead of looping. */
const MAX_EVENTS = 80;

let t: TestApi;
beforeAll(async () => {
  t = await startTestApi({ env: { SSE_MAX_BUFFERED_BYTES: String(THRESHOLD), WS_MAX_BUFFERED_BYTES: String(THRESHOLD) } });
});
afterAll(async () => {
  await t?.close();
});

async function newTask(auth: Record<string, string>): Promise<string> {
  const res = await fetch(`${t.url}/api/tasks`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({ title: "slow" }),
  });
  return ((await res.json()) as { data: { id: string } }).data.id;
}

/** Stores and announces one large event for the task. */
function bigEvent(taskId: string, userId: string, n: number) {
  return t.db.prisma.$transaction((tx) =>
    t.api.bus.append(tx, { taskId, userId, type: "message.created", data: { n, text: "x".repeat(EVENT_BYTES) } }),
  );
}

/** A raw TCP client: everything it reads is kept; `pause()` stops reading (the kernel buffers fill). */
async function rawClient(request: string): Promise<{ socket: net.Socket; received: () => Buffer }> {
  const port = Number(new URL(t.url).port);
  const socket = net.connect(port, "127.0.0.1");
  const chunks: Buffer[] = [];
  socket.on("data", (c: Buffer) => chunks.push(c));
  await new Promise<void>((resolve) => socket.once("connect", resolve));
  socket.write(request);
  return { socket, received: () => Buffer.concat(chunks) };
}

/** A masked client text frame (payload under 126 bytes). */
function textFrame(text: string): Buffer {
  const payload = Buffer.from(text);
  const mask = randomBytes(4);
  const masked = Buffer.from(payload.map((b, i) => b ^ (mask[i % 4] ?? 0)));
  return Buffer.concat([Buffer.from([0x81, 0x80 | payload.length]), mask, masked]);
}

describe("slow readers", () => {
  it("ends an SSE stream whose client stops reading once more than the threshold is unsent", async () => {
    const u = await t.user();
    const taskId = await newTask(u.auth);
    const { socket, received } = await rawClient(
      `GET /api/tasks/${taskId}/stream HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${u.token}\r\n\r\n`,
    );
    try {
      await eventually(() => received().includes("retry: 3000"));
      const open = t.api.sse.size;
      expect(open).toBeGreaterThanOrEqual(1);
      socket.pause();
      for (let n = 0; n < MAX_EVENTS && t.api.sse.size === open; n += 1) await bigEvent(taskId, u.id, n);
      await eventually(() => t.api.sse.size === open - 1);
      // The client that reads again gets what was buffered, then the end of the response.
      socket.resume();
      await eventually(() => received().subarray(-5).toString() === "0\r\n\r\n", 10_000);
    } finally {
      socket.destroy();
    }
  });

  it("closes a WebSocket whose client stops reading with 1013 and a reason", async () => {
    const u = await t.user();
    const taskId = await newTask(u.auth);
    const key = randomBytes(16).toString("base64");
    const { socket, received } = await rawClient(
      `GET /api/ws?token=${u.token} HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
        `Sec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
    );
    const close = vi.spyOn(WebSocket.prototype, "close");
    const slowClosed = () => close.mock.calls.some(([code]) => code === SLOW_CLOSE.code);
    try {
      await eventually(() => received().includes('"type":"ready"'));
      socket.write(textFrame(JSON.stringify({ type: "subscribe", taskId })));
      await eventually(() => received().includes('"type":"subscribed"'));
      socket.pause();
      for (let n = 0; n < MAX_EVENTS && !slowClosed(); n += 1) await bigEvent(taskId, u.id, n);
      await eventually(slowClosed);
      socket.resume();
      const reason = Buffer.from(SLOW_CLOSE.reason);
      const frame = Buffer.concat([Buffer.from([0x88, 2 + reason.length, 0x03, 0xf5]), reason]);
      await eventually(() => received().includes(frame), 10_000);
    } finally {
      close.mockRestore();
      socket.destroy();
    }
  });
});
