import type { TaskEventView } from "@app/contracts";
import { describe, expect, it } from "vitest";
import type { EventBus, TaskListener } from "./bus.js";
import { BACKLOG_PAGE_SIZE, openTaskFeed } from "./feed.js";

const event = (id: number): TaskEventView => ({
  id: String(id),
  taskId: "task",
  type: "message.created",
  data: { id },
  createdAt: new Date(0).toISOString(),
});

/**
 * A bus over an in-memory event store. Its database reads made while a listener is registered
 * wait for `release()`; `onSubscribed` runs as soon as the listener is in place.
 */
function fakeBus(stored: TaskEventView[], onSubscribed: (listener: TaskListener) => void = () => undefined) {
  let listener: TaskListener | undefined;
  let release: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const read = async <T>(fn: () => T): Promise<T> => {
    if (listener) await gate;
    return fn();
  };
  const bus = {
    subscribe: async (_taskId: string, l: TaskListener) => {
      listener = l;
      onSubscribed(l);
      return () => undefined;
    },
    latestId: () => read(() => BigInt(stored.at(-1)?.id ?? 0)),
    backlog: (_taskId: string, after: bigint, limit: number) => read(() => stored.filter((e) => BigInt(e.id ?? 0) > after).slice(0, limit)),
    backlogExceeds: (_taskId: string, after: bigint, count: number) =>
      read(() => stored.filter((e) => BigInt(e.id ?? 0) > after).length > count),
  };
  return { bus: bus as unknown as EventBus, release, listener: () => listener };
}

const tick = () => new Promise((r) => setImmediate(r));

describe("openTaskFeed", () => {
  it("delivers an event committed right after the feed started listening (no gap at the start)", async () => {
    const stored = [event(1), event(2)];
    const fake = fakeBus(stored, (listener) => {
      stored.push(event(3));
      listener.onEvent(event(3));
    });
    const delivered: string[] = [];
    const opening = openTaskFeed(fake.bus, { taskId: "task", userId: "u", deliver: (e) => delivered.push(e.id ?? "") });
    await tick();
    fake.release();
    const feed = await opening;
    expect(delivered).toEqual(["3"]);
    feed.close();
  });

  it("a bus reconnect while the feed is still opening neither replays history nor duplicates the live event", async () => {
    const stored = [event(1), event(2), event(3)];
    const fake = fakeBus(stored);
    const delivered: string[] = [];
    const opening = openTaskFeed(fake.bus, { taskId: "task", userId: "u", deliver: (e) => delivered.push(e.id ?? "") });
    await tick();
    const listener = fake.listener();
    if (!listener) throw new Error("not subscribed");
    // The LISTEN connection comes back (resync) and event 4 arrives while the first read runs.
    stored.push(event(4));
    listener.onResync();
    listener.onEvent(event(4));
    fake.release();
    const feed = await opening;
    await tick();
    expect(delivered).toEqual(["4"]);
    expect(feed.lastId()).toBe(4n);
    feed.close();
  });

  it("replays a backlog longer than one page in order, each event once", async () => {
    const stored = Array.from({ length: 3 * BACKLOG_PAGE_SIZE + 7 }, (_, i) => event(i + 1));
    const fake = fakeBus(stored);
    fake.release();
    const delivered: string[] = [];
    const feed = await openTaskFeed(fake.bus, {
      taskId: "task",
      userId: "u",
      afterId: 0n,
      deliver: (e) => void delivered.push(e.id ?? ""),
    });
    expect(delivered).toEqual(stored.map((e) => e.id));
    feed.close();
  });

  it("skips a backlog deeper than maxResumeEvents with onResync at the newest id, then continues live", async () => {
    const stored = Array.from({ length: 12 }, (_, i) => event(i + 1));
    const fake = fakeBus(stored);
    fake.release();
    const delivered: string[] = [];
    const resyncs: bigint[] = [];
    const feed = await openTaskFeed(fake.bus, {
      taskId: "task",
      userId: "u",
      afterId: 1n,
      maxResumeEvents: 10,
      onResync: (latest) => void resyncs.push(latest),
      deliver: (e) => void delivered.push(e.id ?? ""),
    });
    expect(resyncs).toEqual([12n]);
    expect(delivered).toEqual([]);
    fake.listener()?.onEvent(event(12));
    fake.listener()?.onEvent(event(13));
    expect(delivered).toEqual(["13"]);
    expect(feed.lastId()).toBe(13n);
    feed.close();
  });

  it("replays a backlog of exactly maxResumeEvents", async () => {
    const stored = Array.from({ length: 10 }, (_, i) => event(i + 1));
    const fake = fakeBus(stored);
    fake.release();
    const delivered: string[] = [];
    const feed = await openTaskFeed(fake.bus, {
      taskId: "task",
      userId: "u",
      afterId: 0n,
      maxResumeEvents: 10,
      deliver: (e) => void delivered.push(e.id ?? ""),
    });
    expect(delivered).toHaveLength(10);
    feed.close();
  });
});
