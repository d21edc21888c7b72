import { once } from "node:events";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { eventually, readSse, startTestApi, type TestApi } from "./helpers.js";
import { tryUpgrade } from "./raw-http.js";

let t: TestApi;
beforeAll(async () => {
  t = await startTestApi({ env: { SSE_HEARTBEAT_MS: "100" } });
});
afterAll(async () => {
  await t?.close();
});

async function newTask(auth: Record<string, string>, title = "task"): Promise<string> {
  const res = await fetch(`${t.url}/api/tasks`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({ title }),
  });
  return ((await res.json()) as { data: { id: string } }).data.id;
}

async function postMessage(auth: Record<string, string>, taskId: string, text: string) {
  return fetch(`${t.url}/api/tasks/${taskId}/messages`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({ text }),
  });
}

describe("SSE task stream", () => {
  it("streams new messages and status changes with ids and heartbeats, then resumes from Last-Event-ID", async () => {
    const u = await t.user();
    const taskId = await newTask(u.auth);
    const stream = await fetch(`${t.url}/api/tasks/${taskId}/stream`, { headers: u.auth });
    expect(stream.status).toBe(200);
    expect(stream.headers.get("content-type")).toContain("text/event-stream");
    const reading = readSse(stream, (events) => events.length >= 2 && events.some((e) => e.event === "task.updated"));
    await eventually(() => t.api.bus.listenerCount() > 0);
    const posted = await postMessage(u.auth, taskId, "first");
    expect(posted.status).toBe(201);
    const message = (await posted.json()) as { id: string; text: string; ok?: unknown };
    expect(message.ok).toBeUndefined(); // raw, not wrapped
    expect(message.text).toBe("first");
    await fetch(`${t.url}/api/tasks/${taskId}`, {
      method: "PATCH",
      headers: { ...u.auth, "content-type": "application/json" },
      body: JSON.stringify({ status: "completed" }),
    });
    const { events, raw } = await reading;
    expect(events.map((e) => e.event)).toEqual(["message.created", "task.updated"]);
    expect(JSON.parse(events[0]?.data ?? "{}").data.text).toBe("first");
    expect(JSON.parse(events[1]?.data ?? "{}").data.status).toBe("completed");
    const firstId = events[0]?.id ?? "";
    expect(firstId).toMatch(/^\d+$/);
    expect(raw).toContain("retry: 3000");

    // Missed while disconnected: resume replays exactly what came after the last seen id.
    await postMessage(u.auth, taskId, "while away");
    const resumed = await fetch(`${t.url}/api/tasks/${taskId}/stream`, { headers: { ...u.auth, "last-event-id": firstId } });
    const replay = await readSse(resumed, (e) => e.length >= 2);
    expect(replay.events.map((e) => e.event)).toEqual(["task.updated", "message.created"]);
    expect(JSON.parse(replay.events[1]?.data ?? "{}").data.text).toBe("while away");
    expect(Number(replay.events[0]?.id)).toBeGreaterThan(Number(firstId));
  });

  it("ignores a Last-Event-ID beyond the bigint range instead of failing", async () => {
    const u = await t.user();
    const taskId = await newTask(u.auth);
    for (const headers of [{ "last-event-id": "9999999999999999999" }, {}] as Record<string, string>[]) {
      const controller = new AbortController();
      const query = "last-event-id" in headers ? "" : "?lastEventId=9223372036854775808";
      const res = await fetch(`${t.url}/api/tasks/${taskId}/stream${query}`, {
        headers: { ...u.auth, ...headers },
        signal: controller.signal,
      });
      expect(res.status).toBe(200);
      controller.abort();
    }
  });

  it("sends heartbeat comments", async () => {
    const u = await t.user();
    const taskId = await newTask(u.auth);
    const stream = await fetch(`${t.url}/api/tasks/${taskId}/stream`, { headers: u.auth });
    const { raw } = await readSse(stream, () => false, 350);
    expect(raw.match(/: heartbeat/g)?.length ?? 0).toBeGreaterThanOrEqual(2);
  });

  it("ends the stream with a reason on shutdown", async () => {
    const u = await t.user();
    const taskId = await newTask(u.auth);
    const stream = await fetch(`${t.url}/api/tasks/${taskId}/stream`, { headers: u.auth });
    const reading = readSse(stream, (e) => e.some((x) => x.event === "shutdown"));
    await eventually(() => t.api.sse.size > 0);
    t.api.sse.closeAll("server shutting down");
    const { events } = await reading;
    expect(events.at(-1)).toMatchObject({ event: "shutdown", data: JSON.stringify({ reason: "server shutting down" }) });
  });
});

describe("task messages: JSON and multipart", () => {
  it("accepts multipart with a text field and attachments, and lists them", async () => {
    const u = await t.user();
    const taskId = await newTask(u.auth);
    const form = new FormData();
    form.set("text", "see attached");
    form.append("files", new Blob(["hello"], { type: "text/plain" }), "a.txt");
    form.append("files", new Blob([new Uint8Array([137, 80, 78, 71])], { type: "image/png" }), "b.png");
    const res = await fetch(`${t.url}/api/tasks/${taskId}/messages`, { method: "POST", headers: u.auth, body: form });
    expect(res.status).toBe(201);
    const msg = (await res.json()) as { text: string; attachments: Array<{ id: string; filename: string; size: number }> };
    expect(msg.text).toBe("see attached");
    expect(msg.attachments.map((a) => [a.filename, a.size])).toEqual([
      ["a.txt", 5],
      ["b.png", 4],
    ]);
    const file = await fetch(`${t.url}/api/uploads/${msg.attachments[0]?.id}`, { headers: u.auth });
    expect(await file.text()).toBe("hello");
    const list = (await (await fetch(`${t.url}/api/tasks/${taskId}/messages`, { headers: u.auth })).json()) as { data: unknown[] };
    expect(list.data).toHaveLength(1);
    const noText = new FormData();
    noText.append("files", new Blob(["x"], { type: "text/plain" }), "x.txt");
    expect((await fetch(`${t.url}/api/tasks/${taskId}/messages`, { method: "POST", headers: u.auth, body: noText })).status).toBe(400);
    expect((await postMessage(u.auth, taskId, "")).status).toBe(400);
  });
});

function openWs(query: string): WebSocket {
  return new WebSocket(`${t.url.replace("http", "ws")}/api/ws${query}`);
}

async function refusal(ws: WebSocket): Promise<{ status: number; body: string }> {
  const [, res] = (await once(ws, "unexpected-response")) as [unknown, import("node:http").IncomingMessage];
  let body = "";
  for await (const chunk of res) body += String(chunk);
  return { status: res.statusCode ?? 0, body };
}

describe("WebSocket", () => {
  it("refuses the upgrade with 401 for a missing or bad token, and never logs the token", async () => {
    const missing = await refusal(openWs(""));
    expect(missing.status).toBe(401);
    expect(JSON.parse(missing.body)).toEqual({ ok: false, error: { code: "missing_token", message: expect.any(String) } });
    const bad = await refusal(openWs("?token=a.b.c"));
    expect(bad.status).toBe(401);
    const u = await t.user();
    const cookieOnly = new WebSocket(`${t.url.replace("http", "ws")}/api/ws`, { headers: { cookie: t.stub.addSession(u) } });
    expect((await refusal(cookieOnly)).status).toBe(401);
    // A valid token, accepted: the upgrade is logged, the token is not.
    const ok = openWs(`?token=${u.token}`);
    await once(ok, "open");
    ok.close();
    await eventually(() => t.logs.some((l) => l.includes("websocket connected") && l.includes(u.id)));
    const logs = t.logs.join("");
    expect(logs).not.toContain("a.b.c");
    expect(logs).not.toContain(u.token);
    expect(logs).not.toContain(u.token.split(".")[2]);
    expect(logs).toContain("token=[REDACTED]");
  });

  it("reads the token only from a literal token= parameter: an encoded name is refused and never logged", async () => {
    const u = await t.user();
    const signature = u.token.split(".")[2] ?? "";
    for (const query of [`?%74oken=${u.token}`, `?tok%65n=${u.token}`, `?x=1&%74%6F%6B%65%6E=${u.token}`]) {
      const refused = await tryUpgrade(`${t.url.replace("http", "ws")}/api/ws${query}`);
      expect(refused.status, query).toBe(401);
      expect((JSON.parse(refused.body) as { error: { code: string } }).error.code).toBe("malformed_token");
    }
    await eventually(() => t.logs.filter((l) => l.includes("websocket upgrade refused") && l.includes("malformed_token")).length >= 3);
    const logs = t.logs.join("");
    expect(logs).not.toContain(u.token);
    expect(logs).not.toContain(signature);
    expect(logs).toContain("%74oken=[REDACTED]");
  });

  it("accepts a valid token, delivers subscribed task events, refuses foreign tasks, catches up from lastEventId", async () => {
    const u = await t.user();
    const other = await t.user();
    const taskId = await newTask(u.auth);
    const foreign = await newTask(other.auth);
    const ws = openWs(`?token=${u.token}`);
    const messages: Array<Record<string, unknown>> = [];
    ws.on("message", (data) => messages.push(JSON.parse(String(data)) as Record<string, unknown>));
    await once(ws, "open");
    await eventually(() => messages.find((m) => m.type === "ready"));
    expect(messages[0]).toEqual({ type: "ready", userId: u.id });
    ws.send(JSON.stringify({ type: "subscribe", taskId: foreign }));
    await eventually(() => messages.find((m) => m.type === "error" && m.taskId === foreign));
    ws.send(JSON.stringify({ type: "subscribe", taskId }));
    await eventually(() => messages.find((m) => m.type === "subscribed"));
    await postMessage(u.auth, taskId, "over the socket");
    await postMessage(other.auth, foreign, "not for you");
    const event = (await eventually(() => messages.find((m) => m.type === "event"))) as {
      event: { id: string; type: string; data: { text: string } };
    };
    expect(event.event.type).toBe("message.created");
    expect(event.event.data.text).toBe("over the socket");
    ws.send(JSON.stringify({ type: "ping" }));
    await eventually(() => messages.find((m) => m.type === "pong"));
    expect(messages.filter((m) => m.type === "event")).toHaveLength(1);
    ws.close();

    // A second socket catches up on what it missed.
    await postMessage(u.auth, taskId, "missed");
    const again = openWs(`?token=${u.token}`);
    const got: Array<{ type: string; event?: { data: { text: string } } }> = [];
    again.on("message", (data) => got.push(JSON.parse(String(data)) as { type: string }));
    await once(again, "open");
    again.send(JSON.stringify({ type: "subscribe", taskId, lastEventId: event.event.id }));
    const caught = await eventually(() => got.find((m) => m.type === "event"));
    expect(caught.event?.data.text).toBe("missed");
    again.close();
  });

  it("survives frames the protocol rejects (oversize, invalid UTF-8): that socket closes, the process keeps serving", async () => {
    const u = await t.user();
    for (const frame of [Buffer.alloc(70 * 1024, 120), Buffer.from([0xc3, 0x28])]) {
      const ws = openWs(`?token=${u.token}`);
      await once(ws, "open");
      ws.on("error", () => undefined);
      ws.send(frame, { binary: false });
      const [code] = (await once(ws, "close")) as [number];
      expect(code).toBeGreaterThanOrEqual(1002);
    }
    expect((await fetch(`${t.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${t.url}/api/me`, { headers: u.auth })).status).toBe(200);
  });

  it("closes sockets with 1001 and a reason on shutdown", async () => {
    const u = await t.user();
    const ws = openWs(`?token=${u.token}`);
    await once(ws, "open");
    const closing = once(ws, "close");
    t.api.ws.closeAll("server shutting down");
    const [code, reason] = (await closing) as [number, Buffer];
    expect(code).toBe(1001);
    expect(String(reason)).toBe("server shutting down");
  });
});
