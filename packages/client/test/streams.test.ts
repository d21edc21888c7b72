import type { TaskEventView, WsServerMessage } from "@app/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { type AppClient, createClient, memoryStorage, type WebSocketFactory } from "../src/index.js";
import { cookieFetch, freshEmail, signUpSignedIn, startStack } from "./helpers.js";

let env: Awaited<ReturnType<typeof startStack>>;
beforeAll(async () => {
  env = await startStack();
});
afterAll(async () => {
  await env?.stop();
});

// Node 20 has no global WebSocket: the `ws` package stands in for the browser's.
const webSocket: WebSocketFactory = (url) => new WebSocket(url);

async function signedUp(): Promise<AppClient> {
  const jar = cookieFetch();
  const client = createClient({ baseUrl: env.stack.baseUrl, storage: memoryStorage(), fetch: jar.fetch, webSocket });
  await signUpSignedIn(client, { email: freshEmail("stream"), password: "correct horse battery", name: "Streamer" });
  return client;
}

/** Resolves when `predicate` holds for the collected items (checked on every push). */
function collector<T>() {
  const items: T[] = [];
  const waiters: { predicate: (items: T[]) => boolean; resolve: () => void }[] = [];
  return {
    items,
    push(item: T) {
      items.push(item);
      for (const w of [...waiters]) if (w.predicate(items)) w.resolve();
    },
    until(predicate: (items: T[]) => boolean): Promise<void> {
      if (predicate(items)) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ predicate, resolve }));
    },
  };
}

const texts = (events: TaskEventView[]) => events.filter((e) => e.type === "message.created").map((e) => (e.data as { text: string }).text);

describe("SSE over fetch", () => {
  it("delivers task events live and resumes with Last-Event-ID without losing or repeating any", async () => {
    const client = await signedUp();
    const task = await client.tasks.create({ title: "streamed" });
    const first = collector<TaskEventView>();
    let opened!: () => void;
    const open = new Promise<void>((r) => {
      opened = r;
    });
    const stream = client.tasks.stream(task.id, { onEvent: (e) => first.push(e), onOpen: () => opened() });
    await open;
    await client.tasks.addMessage(task.id, "one");
    await client.tasks.addMessage(task.id, "two");
    await first.until((items) => items.length === 2);
    expect(texts(first.items)).toEqual(["one", "two"]);
    const resumeFrom = stream.lastEventId;
    expect(resumeFrom).toBe(first.items[1]?.id);
    stream.close();
    expect(await stream.done).toBeUndefined();

    await client.tasks.addMessage(task.id, "three (while away)");
    const second = collector<TaskEventView>();
    const resumed = client.tasks.stream(task.id, { lastEventId: resumeFrom ?? "", onEvent: (e) => second.push(e) });
    await second.until((items) => items.length === 1);
    await client.tasks.update(task.id, { status: "completed" });
    await second.until((items) => items.length === 2);
    expect(texts(second.items)).toEqual(["three (while away)"]);
    expect(second.items[1]?.type).toBe("task.updated");
    await client.tasks.remove(task.id);
    expect(await resumed.done).toBeUndefined(); // task.deleted ends the stream
    expect(second.items.at(-1)?.type).toBe("task.deleted");
  });

  it("ends with the error for a task that is not the caller's", async () => {
    const client = await signedUp();
    const stream = client.tasks.stream("someone-elses", { onEvent: () => undefined });
    expect(await stream.done).toMatchObject({ status: 404, code: "not_found" });
  });
});

describe("WebSocket with ?token=", () => {
  it("subscribes and receives task events, replaying from lastEventId", async () => {
    const client = await signedUp();
    const task = await client.tasks.create({ title: "socketed" });
    const earlier = await client.tasks.addMessage(task.id, "before connect");
    expect(earlier.text).toBe("before connect");
    const got = collector<WsServerMessage>();
    const socket = await client.connectSocket({ onMessage: (m) => got.push(m) });
    expect(socket.userId).toBe((await client.me()).id);
    socket.subscribe(task.id, "0");
    await got.until((items) => items.some((m) => m.type === "event"));
    await client.tasks.addMessage(task.id, "live");
    await got.until((items) => items.filter((m) => m.type === "event").length === 2);
    const events = got.items.flatMap((m) => (m.type === "event" ? [m.event] : []));
    expect(texts(events)).toEqual(["before connect", "live"]);
    socket.close();
  });

  it("refreshes a bad token through get-session before giving up", async () => {
    const storage = memoryStorage();
    const client = createClient({ baseUrl: env.stack.baseUrl, storage, fetch: cookieFetch().fetch, webSocket });
    await signUpSignedIn(client, { email: freshEmail("ws"), password: "correct horse battery", name: "W" });
    // Same cookie session, but a broken stored token: the upgrade is refused once, then retried.
    storage.setItem("authToken", "not-a-jwt");
    const socket = await client.connectSocket({ onMessage: () => undefined });
    expect(storage.getItem("authToken")).toMatch(/^ey/);
    socket.close();
    await client.auth.signOut();
    await expect(client.connectSocket({ onMessage: () => undefined })).rejects.toMatchObject({ status: 401 });
  });
});
