import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { LocalTextProvider } from "../src/generate/text-providers.js";
import { eventually, startTestApi, type TestApi } from "./helpers.js";
import { tryUpgrade } from "./raw-http.js";

// Per-user caps on what one user can hold open (in process here; Redis in src/lib/user-caps.test.ts).
let t: TestApi;
beforeAll(async () => {
  t = await startTestApi({
    env: { MAX_STREAMS_PER_USER: "2", MAX_SOCKETS_PER_USER: "2", MAX_GENERATIONS_PER_USER: "1" },
    // Slow enough that a generation is still running when the next one is asked for.
    deps: { textProvider: new LocalTextProvider(100) },
  });
});
afterAll(async () => {
  await t?.close();
});

async function newTask(auth: Record<string, string>): Promise<string> {
  const res = await fetch(`${t.url}/api/tasks`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({ title: "caps" }),
  });
  return ((await res.json()) as { data: { id: string } }).data.id;
}

async function expectCapped(res: Response): Promise<void> {
  expect(res.status).toBe(429);
  expect(res.headers.get("retry-after")).toBe("5");
  expect(await res.json()).toMatchObject({ ok: false, error: { code: "rate_limited" } });
}

describe("per-user caps", () => {
  it("refuses a user's SSE stream over MAX_STREAMS_PER_USER with 429 and Retry-After, frees the slot when a stream closes, and leaves other users alone", async () => {
    const u = await t.user();
    const other = await t.user();
    const taskId = await newTask(u.auth);
    const otherTask = await newTask(other.auth);
    const open = (auth: Record<string, string>, id: string, signal?: AbortSignal) =>
      fetch(`${t.url}/api/tasks/${id}/stream`, { headers: auth, ...(signal ? { signal } : {}) });
    const first = new AbortController();
    const held = [await open(u.auth, taskId, first.signal), await open(u.auth, taskId)];
    expect(held.map((r) => r.status)).toEqual([200, 200]);
    await expectCapped(await open(u.auth, taskId));
    const theirs = await open(other.auth, otherTask);
    expect(theirs.status).toBe(200);
    first.abort();
    await eventually(() => t.api.caps.localCount("streams", u.id) === 1);
    const again = await open(u.auth, taskId);
    expect(again.status).toBe(200);
    for (const r of [held[1], theirs, again]) await r?.body?.cancel();
    await eventually(() => t.api.caps.localCount("streams", u.id) === 0);
  });

  it("a stream refused for another reason (404) holds no slot", async () => {
    const u = await t.user();
    for (let i = 0; i < 4; i += 1) {
      expect((await fetch(`${t.url}/api/tasks/0190a0b0-0000-7000-8000-000000000000/stream`, { headers: u.auth })).status).toBe(404);
    }
    expect(t.api.caps.localCount("streams", u.id)).toBe(0);
  });

  it("refuses a WebSocket over MAX_SOCKETS_PER_USER with an HTTP 429 before upgrading, and frees the slot on close", async () => {
    const u = await t.user();
    const wsUrl = `${t.url.replace("http", "ws")}/api/ws?token=${u.token}`;
    const sockets = [new WebSocket(wsUrl), new WebSocket(wsUrl)];
    await Promise.all(sockets.map((s) => new Promise((resolve) => s.once("open", resolve))));
    const refused = await tryUpgrade(wsUrl);
    expect(refused.status).toBe(429);
    expect(JSON.parse(refused.body)).toMatchObject({ ok: false, error: { code: "rate_limited" } });
    sockets[0]?.close();
    await eventually(() => t.api.caps.localCount("sockets", u.id) === 1);
    const third = new WebSocket(wsUrl);
    await new Promise((resolve) => third.once("open", resolve));
    third.close();
    sockets[1]?.close();
    await eventually(() => t.api.caps.localCount("sockets", u.id) === 0);
  });

  it("refuses a generation over MAX_GENERATIONS_PER_USER and frees the slot when it ends", async () => {
    const u = await t.user();
    const other = await t.user();
    const generate = (auth: Record<string, string>, signal?: AbortSignal) =>
      fetch(`${t.url}/api/generate/stream`, {
        method: "POST",
        headers: { ...auth, "content-type": "application/json" },
        body: JSON.stringify({ prompt: "one two three four five six seven eight nine ten eleven twelve" }),
        ...(signal ? { signal } : {}),
      });
    const running = new AbortController();
    expect((await generate(u.auth, running.signal)).status).toBe(200);
    await expectCapped(await generate(u.auth));
    const theirs = await generate(other.auth);
    expect(theirs.status).toBe(200);
    await theirs.text();
    running.abort();
    await eventually(() => t.api.caps.localCount("generations", u.id) === 0);
    const next = await generate(u.auth);
    expect(next.status).toBe(200);
    expect(await next.text()).toContain("event: done");
    await eventually(() => t.api.caps.localCount("generations", u.id) === 0);
  });
});
