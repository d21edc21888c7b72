import { randomUUID } from "node:crypto";
import { readdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { Writable } from "node:stream";
import { USER_DELETED_CHANNEL } from "@app/contracts";
import { createDb, type Db } from "@app/db";
import { createLogger } from "@app/http-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../src/app.js";
import { eventually, startTestApi, type TestApi } from "./helpers.js";

let t: TestApi;
/** The database as its owner sees it (identity's outbox and the API's tables alike). */
let admin: Db;

beforeAll(async () => {
  t = await startTestApi();
  const url = new URL(t.config.databaseUrl);
  const base = new URL(process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL ?? "");
  url.username = base.username;
  url.password = base.password;
  admin = createDb(url.toString(), { max: 2 });
});
afterAll(async () => {
  await admin?.close();
  await t?.close();
});

type User = Awaited<ReturnType<TestApi["user"]>>;

/** A user with a row in every API table, an uploaded file and a `.partial` leftover. */
async function userWithEverything(): Promise<User & { files: string[] }> {
  const u = await t.user();
  const form = new FormData();
  form.append("file", new Blob(["bytes of the user"], { type: "text/plain" }), "notes.txt");
  const uploaded = await fetch(`${t.url}/api/uploads`, { method: "POST", headers: u.auth, body: form });
  expect(uploaded.status).toBe(201);
  const upload = (await uploaded.json()) as { id: string };
  const p = admin.prisma;
  const project = await p.project.create({ data: { id: randomUUID(), userId: u.id, name: "P" } });
  const agent = await p.agent.create({ data: { id: randomUUID(), userId: u.id, projectId: project.id, name: "A" } });
  const chat = await p.chat.create({ data: { id: randomUUID(), userId: u.id, agentId: agent.id, title: "C" } });
  await p.chatMessage.create({ data: { id: randomUUID(), chatId: chat.id, role: "user", content: "hi" } });
  const task = await p.task.create({ data: { id: randomUUID(), userId: u.id, projectId: project.id, title: "T" } });
  const message = await p.taskMessage.create({ data: { id: randomUUID(), taskId: task.id, userId: u.id, text: "m" } });
  await p.upload.update({ where: { id: upload.id }, data: { taskMessageId: message.id } });
  await p.taskEvent.create({ data: { taskId: task.id, userId: u.id, type: "created", data: {} } });
  const server = await p.mcpServer.create({ data: { id: randomUUID(), userId: u.id, name: "M", url: "https://mcp.example.com/" } });
  await p.mcpOAuthState.create({
    data: { id: randomUUID(), userId: u.id, serverId: server.id, codeVerifier: "v", expiresAt: new Date(Date.now() + 60_000) },
  });
  await p.userRole.create({ data: { userId: u.id, role: "admin" } });
  // An upload cut off mid-way: its row exists, only `<id>.partial` is on disk.
  const partial = await p.upload.create({
    data: { id: randomUUID(), userId: u.id, filename: "cut.txt", contentType: "text/plain", size: 0, sha256: "" },
  });
  await writeFile(path.join(t.config.uploadDir, `${partial.id}.partial`), "half");
  return { ...u, files: [upload.id, `${partial.id}.partial`] };
}

/** What the API still keeps for a user. */
async function leftovers(userId: string): Promise<Record<string, number>> {
  const p = admin.prisma;
  const where = { userId };
  return {
    project: await p.project.count({ where }),
    agent: await p.agent.count({ where }),
    chat: await p.chat.count({ where }),
    chatMessage: await p.chatMessage.count({ where: { chat: { userId } } }),
    task: await p.task.count({ where }),
    taskMessage: await p.taskMessage.count({ where }),
    taskEvent: await p.taskEvent.count({ where }),
    upload: await p.upload.count({ where }),
    mcpServer: await p.mcpServer.count({ where }),
    mcpOAuthState: await p.mcpOAuthState.count({ where }),
    userRole: await p.userRole.count({ where }),
  };
}
const NOTHING = {
  project: 0,
  agent: 0,
  chat: 0,
  chatMessage: 0,
  task: 0,
  taskMessage: 0,
  taskEvent: 0,
  upload: 0,
  mcpServer: 0,
  mcpOAuthState: 0,
  userRole: 0,
};

/** What identity's delete-user does to the outbox (apps/identity/src/services/account-settings.ts). */
async function deleteAsIdentity(userId: string): Promise<void> {
  await admin.prisma.$transaction([
    admin.prisma.$executeRaw`INSERT INTO user_deletion (user_id) VALUES (${userId})`,
    admin.prisma.$executeRaw`SELECT pg_notify(${USER_DELETED_CHANNEL}, ${JSON.stringify({ userId })})`,
  ]);
}

async function apiDone(userId: string): Promise<boolean> {
  const rows = await admin.prisma.$queryRaw<
    { done: Date | null }[]
  >`SELECT api_done_at AS done FROM user_deletion WHERE user_id = ${userId}`;
  return rows[0]?.done != null;
}

describe("the API deletes a deleted user's data (user_deletion outbox + auth_user_deleted)", () => {
  it("removes every row and file of the user on the notification, and nothing of anyone else", async () => {
    const gone = await userWithEverything();
    const kept = await userWithEverything();
    expect(Object.values(await leftovers(gone.id)).every((n) => n > 0)).toBe(true);

    await deleteAsIdentity(gone.id);
    await eventually(() => apiDone(gone.id));
    expect(await leftovers(gone.id)).toEqual(NOTHING);
    const files = await readdir(t.config.uploadDir);
    for (const f of gone.files) expect(files).not.toContain(f);
    for (const f of kept.files) expect(files).toContain(f);
    expect(Object.values(await leftovers(kept.id)).every((n) => n > 0)).toBe(true);

    // Idempotent: another trigger finds nothing to do and changes nothing.
    await t.api.deletions.run("again");
    expect(await leftovers(kept.id)).not.toEqual(NOTHING);
  });

  it("shares the work between two API instances on one database, each user done once", async () => {
    const logs: string[] = [];
    const logger = createLogger({
      name: "api-second",
      level: "info",
      destination: new Writable({
        write(chunk, _encoding, callback) {
          logs.push(String(chunk));
          callback();
        },
      }),
    });
    const second = createApp({ config: t.config, db: t.db, logger });
    await second.start();
    try {
      const users = await Promise.all([userWithEverything(), userWithEverything(), userWithEverything()]);
      const before = t.logs.length;
      for (const u of users) await deleteAsIdentity(u.id);
      for (const u of users) await eventually(() => apiDone(u.id));
      await Promise.all([t.api.deletions.run("settle"), second.deletions.run("settle")]);
      for (const u of users) expect(await leftovers(u.id)).toEqual(NOTHING);
      const done = [...t.logs.slice(before), ...logs].filter((l) => l.includes("user's API data deleted"));
      expect(done).toHaveLength(users.length);
      expect([...t.logs.slice(before), ...logs].some((l) => l.includes("deletion pass failed"))).toBe(false);
    } finally {
      await second.shutdown("test over");
    }
  });

  it("catches up at start with a deletion made while the API was down", async () => {
    const gone = await userWithEverything();
    await t.api.shutdown("down for the test");
    await deleteAsIdentity(gone.id);
    expect(await apiDone(gone.id)).toBe(false);

    const logger = createLogger({ name: "api-restarted", level: "silent" });
    const restarted = createApp({ config: t.config, db: t.db, logger });
    await restarted.start();
    try {
      await eventually(() => apiDone(gone.id));
      expect(await leftovers(gone.id)).toEqual(NOTHING);
      const files = await readdir(t.config.uploadDir);
      for (const f of gone.files) expect(files).not.toContain(f);
    } finally {
      await restarted.shutdown("test over");
    }
  });
});

describe("a token issued before its account was deleted", () => {
  let late: TestApi;
  beforeAll(async () => {
    late = await startTestApi();
  });
  afterAll(async () => {
    await late?.close();
  });

  it("gets 401 in the error envelope on a write once the user row is gone, never a 500", async () => {
    const u = await late.user();
    const url = new URL(late.config.databaseUrl);
    const base = new URL(process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL ?? "");
    url.username = base.username;
    url.password = base.password;
    const owner = createDb(url.toString(), { max: 1 });
    try {
      // Identity's housekeeping deletes the user row after the API's part is done.
      await owner.prisma.$executeRaw`DELETE FROM "user" WHERE id = ${u.id}`;
    } finally {
      await owner.close();
    }
    const res = await fetch(`${late.url}/api/projects`, {
      method: "POST",
      headers: { ...u.auth, "content-type": "application/json" },
      body: JSON.stringify({ name: "after deletion" }),
    });
    expect(res.status).toBe(401);
    const body = (await res.json()) as { ok: boolean; error: { code: string } };
    expect(body).toMatchObject({ ok: false, error: { code: "unauthorized" } });

    const form = new FormData();
    form.append("file", new Blob(["x"], { type: "text/plain" }), "x.txt");
    const upload = await fetch(`${late.url}/api/uploads`, { method: "POST", headers: u.auth, body: form });
    expect(upload.status).toBe(401);
    expect(await readdir(late.config.uploadDir)).toEqual([".instances"]);
  });
});
