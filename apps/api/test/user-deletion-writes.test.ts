import { once } from "node:events";
import { readdir } from "node:fs/promises";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import net from "node:net";
import { USER_DELETED_CHANNEL } from "@app/contracts";
import { createDb, type Db } from "@app/db";
import { createLogger } from "@app/http-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { type ApiApp, createApp } from "../src/app.js";
import { ACCOUNT_DELETED_CLOSE } from "../src/events/ws-hub.js";
import { createHttpServer } from "../src/http-server.js";
import { eventually, readSse, startTestApi, type TestApi } from "./helpers.js";

// A JWT outlives its account (the contract): after delete-user, two API instances on one database
// refuse its writes at once, end its streams and sockets, and keep nothing it wrote.
let t: TestApi;
let second: { app: ApiApp; server: Server; url: string };
let admin: Db;

beforeAll(async () => {
  t = await startTestApi();
  const url = new URL(t.config.databaseUrl);
  const base = new URL(process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL ?? "");
  url.username = base.username;
  url.password = base.password;
  admin = createDb(url.toString(), { max: 2 });
  const app = createApp({ config: t.config, db: t.db, logger: createLogger({ name: "api-second", level: "silent" }) });
  const server = createHttpServer(app, t.config);
  await app.start();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  second = { app, server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
});
afterAll(async () => {
  if (second) {
    await second.app.shutdown("test over");
    second.server.closeAllConnections();
    await new Promise<void>((resolve) => second.server.close(() => resolve()));
    await second.app.close();
  }
  await admin?.close();
  await t?.close();
});

/** What identity's delete-user does to the outbox (apps/identity/src/services/account-settings.ts). */
async function deleteAsIdentity(userId: string): Promise<void> {
  await admin.prisma.$transaction([
    admin.prisma.$executeRaw`INSERT INTO user_deletion (user_id) VALUES (${userId})`,
    admin.prisma.$executeRaw`SELECT pg_notify(${USER_DELETED_CHANNEL}, ${JSON.stringify({ userId })})`,
  ]);
}

function post(base: string, auth: Record<string, string>, path: string, body: unknown): Promise<Response> {
  return fetch(`${base}${path}`, { method: "POST", headers: { ...auth, "content-type": "application/json" }, body: JSON.stringify(body) });
}

function uploadForm(name: string): FormData {
  const form = new FormData();
  form.append("file", new Blob([`bytes of ${name}`], { type: "text/plain" }), name);
  return form;
}

const BOUNDARY = "----deleted";

/** An upload whose head and half its file are sent now; `finish()` sends the rest and reads the answer. */
async function halfUpload(base: string, authorization: string) {
  const head = Buffer.from(
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="late.txt"\r\nContent-Type: text/plain\r\n\r\n`,
  );
  const body = Buffer.concat([head, Buffer.alloc(32 * 1024, "y"), Buffer.from(`\r\n--${BOUNDARY}--\r\n`)]);
  const socket = net.connect(Number(new URL(base).port), "127.0.0.1");
  const chunks: Buffer[] = [];
  socket.on("data", (c: Buffer) => chunks.push(c));
  await once(socket, "connect");
  socket.write(
    `POST /api/uploads HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${authorization}\r\nConnection: close\r\n` +
      `Content-Type: multipart/form-data; boundary=${BOUNDARY}\r\nContent-Length: ${body.length}\r\n\r\n`,
  );
  socket.write(body.subarray(0, head.length + 16 * 1024));
  return {
    async finish(): Promise<{ status: number; code: string }> {
      // Not end(): a half-closed request may be dropped before its answer; the server closes.
      socket.write(body.subarray(head.length + 16 * 1024));
      await once(socket, "close");
      const text = Buffer.concat(chunks).toString();
      const json = JSON.parse(text.slice(text.indexOf("\r\n\r\n") + 4)) as { error?: { code: string } };
      return { status: Number(text.slice(9, 12)), code: json.error?.code ?? "" };
    },
  };
}

describe("a token issued before its account was deleted", () => {
  it("writes nothing once delete-user committed, on either instance, and its streams and sockets end", async () => {
    const u = await t.user();
    const other = await t.user();
    const created = await post(t.url, u.auth, "/api/tasks", { title: "before" });
    expect(created.status).toBe(201);
    const taskId = ((await created.json()) as { data: { id: string } }).data.id;
    const kept = await fetch(`${t.url}/api/uploads`, { method: "POST", headers: u.auth, body: uploadForm("before.txt") });
    const keptId = ((await kept.json()) as { id: string }).id;

    const stream = await fetch(`${second.url}/api/tasks/${taskId}/stream`, { headers: u.auth });
    expect(stream.status).toBe(200);
    const streamEnd = readSse(stream, (events) => events.some((e) => e.event === "account-deleted"), 10_000);
    const socket = new WebSocket(`${second.url.replace("http:", "ws:")}/api/ws?token=${u.token}`);
    const socketClosed = once(socket, "close");
    await once(socket, "open");
    const late = await halfUpload(t.url, u.auth.authorization);
    await eventually(async () => (await readdir(t.config.uploadDir)).some((n) => n.endsWith(".partial")));

    await deleteAsIdentity(u.id);

    // At once: the outbox row is the tombstone every insert checks, whatever this instance heard yet.
    for (const base of [t.url, second.url]) {
      const writes = [
        await post(base, u.auth, "/api/tasks", { title: "after" }),
        await post(base, u.auth, "/api/projects", { name: "after" }),
        await post(base, u.auth, "/api/mcp-servers", { name: "after", url: "https://mcp.example.com/mcp" }),
        await post(base, u.auth, `/api/tasks/${taskId}/messages`, { text: "after" }),
        await fetch(`${base}/api/uploads`, { method: "POST", headers: u.auth, body: uploadForm("after.txt") }),
      ];
      for (const res of writes) {
        expect(res.status, `${base} ${res.url}`).toBe(401);
        expect(await res.json()).toMatchObject({ ok: false, error: { code: "unauthorized" } });
      }
    }
    expect(await late.finish()).toEqual({ status: 401, code: "unauthorized" });

    const { events } = await streamEnd;
    expect(events.at(-1)?.event).toBe("account-deleted");
    const [code, reason] = (await socketClosed) as [number, Buffer];
    expect([code, String(reason)]).toEqual([ACCOUNT_DELETED_CLOSE.code, ACCOUNT_DELETED_CLOSE.reason]);
    // New streams and sockets are refused too.
    expect((await fetch(`${second.url}/api/tasks/${taskId}/stream`, { headers: u.auth })).status).toBe(401);

    // The deletion pass leaves no row and no file of the user; another user's writes go on.
    await eventually(async () => (await admin.prisma.upload.count({ where: { userId: u.id } })) === 0);
    await eventually(async () => (await admin.prisma.task.count({ where: { userId: u.id } })) === 0);
    const files = await readdir(t.config.uploadDir);
    expect(files.filter((n) => !n.startsWith("."))).not.toContain(keptId);
    expect(files.filter((n) => n.endsWith(".partial"))).toEqual([]);
    for (const table of ["project", "mcpServer", "taskMessage", "taskEvent"] as const) {
      expect(await (admin.prisma[table] as unknown as { count(a: unknown): Promise<number> }).count({ where: { userId: u.id } })).toBe(0);
    }
    expect((await post(second.url, other.auth, "/api/tasks", { title: "still fine" })).status).toBe(201);
  }, 30_000);

  it("is refused by the write's own transaction on an instance that heard no notification", async () => {
    // An instance whose LISTEN connection never came up: it knows nothing of the deletion.
    const deaf = createApp({ config: t.config, db: t.db, logger: createLogger({ name: "api-deaf", level: "silent" }) });
    const server = createHttpServer(deaf, t.config);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const u = await t.user();
      expect((await post(base, u.auth, "/api/projects", { name: "before" })).status).toBe(201);
      await deleteAsIdentity(u.id);
      const before = await readdir(t.config.uploadDir);
      const project = await post(base, u.auth, "/api/projects", { name: "after" });
      expect(project.status).toBe(401);
      expect(await project.json()).toMatchObject({ ok: false, error: { code: "unauthorized" } });
      const upload = await fetch(`${base}/api/uploads`, { method: "POST", headers: u.auth, body: uploadForm("after.txt") });
      expect(upload.status).toBe(401);
      expect(await readdir(t.config.uploadDir)).toEqual(before);
      await eventually(async () => (await admin.prisma.project.count({ where: { userId: u.id } })) === 0);
    } finally {
      await deaf.shutdown("test over");
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
