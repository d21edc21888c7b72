import { once } from "node:events";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { createDb, type Db } from "@app/db";
import { createTestDatabase, type TestDatabase } from "@app/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { type IdentityStub, startIdentityStub } from "./fixtures/identity-stub.js";
import { eventually, readSse } from "./helpers.js";
import { type ApiProcess, assertBuilt, spawnApi } from "./spawn-api.js";

let stub: IdentityStub;
let database: TestDatabase;
let db: Db;
let uploadDir: string;
const instances: ApiProcess[] = [];

beforeAll(async () => {
  assertBuilt();
  stub = await startIdentityStub();
  database = await createTestDatabase();
  db = createDb(database.url);
  uploadDir = await mkdtemp(path.join(os.tmpdir(), "api-x-"));
  const env = {
    DATABASE_URL: database.url,
    IDENTITY_URL: stub.url,
    BASE_URL: stub.baseUrl,
    UPLOAD_DIR: uploadDir,
    DATA_ENCRYPTION_KEY: "cross-instance-test-key-0123456789abcdef",
    LOG_LEVEL: "info",
  };
  instances.push(...(await Promise.all([spawnApi(env), spawnApi(env)])));
});

afterAll(async () => {
  for (const i of instances) {
    if (i.proc.exitCode === null) {
      i.proc.kill("SIGKILL");
      await once(i.proc, "exit");
    }
  }
  await db?.close();
  await database?.drop();
  await stub?.close();
  if (uploadDir) await rm(uploadDir, { recursive: true, force: true });
});

describe("two API processes, one database", () => {
  it("delivers an event created on one instance to SSE and WebSocket clients of the other", async () => {
    const [a, b] = instances;
    if (!a || !b) throw new Error("instances missing");
    const user = { id: crypto.randomUUID(), email: "x@example.com", name: "X" };
    await db.prisma.user.create({ data: user });
    const token = await stub.mint(user);
    const auth = { authorization: `Bearer ${token}` };
    const created = await fetch(`${b.url}/api/tasks`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ title: "shared" }),
    });
    const taskId = ((await created.json()) as { data: { id: string } }).data.id;

    const ws = new WebSocket(`${a.url.replace("http", "ws")}/api/ws?token=${token}`);
    const wsMessages: Array<{ type: string; event?: { data: { text: string } } }> = [];
    ws.on("message", (d) => wsMessages.push(JSON.parse(String(d)) as { type: string }));
    await once(ws, "open");
    ws.send(JSON.stringify({ type: "subscribe", taskId }));
    await eventually(() => wsMessages.find((m) => m.type === "subscribed"));

    const sse = await fetch(`${a.url}/api/tasks/${taskId}/stream`, { headers: auth });
    expect(sse.status).toBe(200);
    const reading = readSse(sse, (e) => e.some((x) => x.event === "message.created"), 8_000);
    const posted = await fetch(`${b.url}/api/tasks/${taskId}/messages`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ text: "from instance B" }),
    });
    expect(posted.status).toBe(201);
    const { events } = await reading;
    expect(JSON.parse(events.find((e) => e.event === "message.created")?.data ?? "{}").data.text).toBe("from instance B");
    const wsEvent = await eventually(() => wsMessages.find((m) => m.type === "event"));
    expect(wsEvent.event?.data.text).toBe("from instance B");
    ws.close();
  });

  it("on SIGTERM ends SSE streams and sockets with a reason and exits 0", async () => {
    const a = instances[0];
    if (!a) throw new Error("instance missing");
    const user = { id: crypto.randomUUID(), email: "y@example.com", name: "Y" };
    await db.prisma.user.create({ data: user });
    const token = await stub.mint(user);
    const auth = { authorization: `Bearer ${token}` };
    const created = await fetch(`${a.url}/api/tasks`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ title: "t" }),
    });
    const taskId = ((await created.json()) as { data: { id: string } }).data.id;
    const ws = new WebSocket(`${a.url.replace("http", "ws")}/api/ws?token=${token}`);
    await once(ws, "open");
    const closed = once(ws, "close");
    const sse = await fetch(`${a.url}/api/tasks/${taskId}/stream`, { headers: auth });
    const reading = readSse(sse, (e) => e.some((x) => x.event === "shutdown"), 8_000);
    const exited = once(a.proc, "exit");
    a.proc.kill("SIGTERM");
    const { events } = await reading;
    expect(events.find((e) => e.event === "shutdown")?.data).toBe(JSON.stringify({ reason: "server shutting down" }));
    const [code, reason] = (await closed) as [number, Buffer];
    expect([code, String(reason)]).toEqual([1001, "server shutting down"]);
    const [exitCode] = (await exited) as [number];
    expect(exitCode).toBe(0);
    expect(a.output.join("\n")).not.toContain(token);
  });
});
