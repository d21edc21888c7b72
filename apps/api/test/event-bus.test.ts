import { randomUUID } from "node:crypto";
import net from "node:net";
import type { TaskEventView } from "@app/contracts";
import { createDb, type Db } from "@app/db";
import { createTestDatabase, type TestDatabase } from "@app/db/testing";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EVENT_BUS_APPLICATION_NAME, EventBus } from "../src/events/bus.js";
import { openTaskFeed } from "../src/events/feed.js";
import { eventually, readSse, startTestApi, type TestApi } from "./helpers.js";

/** A TCP proxy to PostgreSQL whose open connections can be frozen: no data, no FIN (a dead NAT entry). */
async function freezableProxy(target: { host: string; port: number }) {
  const pairs: Array<[net.Socket, net.Socket]> = [];
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    client.pipe(upstream).pipe(client);
    const drop = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on("error", drop);
    upstream.on("error", drop);
    pairs.push([client, upstream]);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    port: (server.address() as net.AddressInfo).port,
    /** Stalls every connection open now; later ones pass normally. */
    freeze() {
      for (const [client, upstream] of pairs.splice(0)) {
        client.unpipe(upstream);
        upstream.unpipe(client);
        client.pause();
        upstream.pause();
        frozen.push(client, upstream);
      }
    },
    async close() {
      for (const s of [...frozen, ...pairs.flat()]) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
const frozen: net.Socket[] = [];

describe("EventBus liveness", () => {
  let database: TestDatabase;
  let db: Db;
  beforeAll(async () => {
    database = await createTestDatabase();
    db = createDb(database.url);
  });
  afterAll(async () => {
    await db?.close();
    await database?.drop();
  });

  it("detects a LISTEN connection that died silently (heartbeat) and catches up on what it missed", async () => {
    const url = new URL(database.url);
    const proxy = await freezableProxy({ host: url.hostname, port: Number(url.port || 5432) });
    url.hostname = "127.0.0.1";
    url.port = String(proxy.port);
    const bus = new EventBus({
      databaseUrl: url.toString(),
      prisma: db.prisma,
      logger: pino({ level: "silent" }),
      heartbeatMs: 50,
      heartbeatTimeoutMs: 200,
      minBackoffMs: 10,
    });
    const userId = randomUUID();
    const taskId = randomUUID();
    await db.prisma.user.create({ data: { id: userId, email: `${userId}@example.com`, name: "L" } });
    await db.prisma.task.create({ data: { id: taskId, userId, title: "t" } });
    const append = (n: number) => db.prisma.$transaction((tx) => bus.append(tx, { taskId, userId, type: "message.created", data: { n } }));
    const got: TaskEventView[] = [];
    try {
      await bus.start();
      expect(bus.connected).toBe(true);
      const feed = await openTaskFeed(bus, { taskId, userId, deliver: (e) => got.push(e) });
      await append(1);
      await eventually(() => got.length === 1);
      proxy.freeze();
      // Announced while the LISTEN connection is silently dead: the NOTIFY is lost in transit.
      await append(2);
      await eventually(() => got.length === 2, 10_000);
      await append(3);
      await eventually(() => got.length === 3);
      expect(got.map((e) => (e.data as { n: number }).n)).toEqual([1, 2, 3]);
      feed.close();
    } finally {
      await bus.close();
      await proxy.close();
    }
  });

  it("close() does not hang on a LISTEN connection that died silently", { timeout: 5_000 }, async () => {
    const url = new URL(database.url);
    const proxy = await freezableProxy({ host: url.hostname, port: Number(url.port || 5432) });
    url.hostname = "127.0.0.1";
    url.port = String(proxy.port);
    const bus = new EventBus({
      databaseUrl: url.toString(),
      prisma: db.prisma,
      logger: pino({ level: "silent" }),
      heartbeatMs: 600_000,
      heartbeatTimeoutMs: 200,
    });
    try {
      await bus.start();
      expect(bus.connected).toBe(true);
      proxy.freeze();
      await bus.close();
      expect(bus.connected).toBe(false);
    } finally {
      await proxy.close();
    }
  });

  it("close() fails every pending ready() at once instead of leaving it waiting", { timeout: 5_000 }, async () => {
    const bus = new EventBus({
      databaseUrl: "postgresql://nobody@127.0.0.1:1/unreachable",
      prisma: db.prisma,
      logger: pino({ level: "silent" }),
      readyTimeoutMs: 600_000,
    });
    const waiting = bus.ready();
    const subscribing = bus.subscribe("task", { userId: "u", onEvent: () => undefined, onResync: () => undefined });
    await bus.close();
    await expect(waiting).rejects.toMatchObject({ code: "service_unavailable" });
    await expect(subscribing).rejects.toMatchObject({ code: "service_unavailable" });
  });
});

describe("the API's LISTEN connection killed by the server", () => {
  let t: TestApi;
  beforeAll(async () => {
    t = await startTestApi();
  });
  afterAll(async () => {
    await t?.close();
  });

  const post = (auth: Record<string, string>, taskId: string, text: string) =>
    fetch(`${t.url}/api/tasks/${taskId}/messages`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ text }),
    });

  it("reconnects (found by application_name) and delivers what happened meanwhile and after", async () => {
    const u = await t.user();
    const created = await fetch(`${t.url}/api/tasks`, {
      method: "POST",
      headers: { ...u.auth, "content-type": "application/json" },
      body: JSON.stringify({ title: "kill" }),
    });
    const taskId = ((await created.json()) as { data: { id: string } }).data.id;
    const stream = await fetch(`${t.url}/api/tasks/${taskId}/stream`, { headers: u.auth });
    const texts = (events: Array<{ event?: string; data?: string }>) =>
      events.filter((e) => e.event === "message.created").map((e) => (JSON.parse(e.data ?? "{}") as { data: { text: string } }).data.text);
    const reading = readSse(stream, (events) => texts(events).length >= 3, 15_000);
    await post(u.auth, taskId, "before");
    const database = new URL(t.config.databaseUrl).pathname.slice(1);
    const listeners = await t.db.prisma.$queryRaw<Array<{ pid: number }>>`
      SELECT pid FROM pg_stat_activity WHERE application_name = ${EVENT_BUS_APPLICATION_NAME} AND datname = ${database}`;
    expect(listeners).toHaveLength(1);
    await t.db.prisma.$queryRaw`SELECT pg_terminate_backend(${listeners[0]?.pid ?? 0}::int)`;
    await eventually(() => !t.api.bus.connected);
    await post(u.auth, taskId, "during");
    await eventually(() => t.api.bus.connected, 10_000);
    await post(u.auth, taskId, "after");
    const { events } = await reading;
    expect(texts(events)).toEqual(["before", "during", "after"]);
  });
});
