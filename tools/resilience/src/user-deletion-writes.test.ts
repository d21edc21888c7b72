import { once } from "node:events";
import { readdir } from "node:fs/promises";
import net from "node:net";
import { createTestDatabase, type TestDatabase } from "@app/db/testing";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { call, secret, signUp, waitFor } from "./client.js";
import { type Cluster, startCluster } from "./cluster.js";

// A JWT outlives its account (the contract), but not its account's data: once identity's
// delete-user answers, both API processes refuse that JWT's writes, end its SSE streams and
// WebSockets, and the user's rows and files (an upload still arriving included) are gone within
// the deletion target of user-deletion.test.ts, not when identity's housekeeping deletes the row.
const TARGET_MS = 10_000;
let database: TestDatabase;
let cluster: Cluster;
let admin: pg.Client;

beforeAll(async () => {
  database = await createTestDatabase();
  cluster = await startCluster({ databaseUrl: database.url, authSecret: secret(), dataEncryptionKey: secret(), apis: 2 });
  admin = new pg.Client({ connectionString: database.url });
  await admin.connect();
}, 120_000);
afterAll(async () => {
  await admin?.end();
  await cluster?.stop();
  await database?.drop();
});

const BOUNDARY = "----deleted";

/** An upload whose head and half its file are sent now; `finish()` sends the rest and reads the status and code. */
async function halfUpload(base: string, jwt: string) {
  const head = Buffer.from(
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="late.txt"\r\nContent-Type: text/plain\r\n\r\n`,
  );
  const body = Buffer.concat([head, Buffer.alloc(32 * 1024, "y"), Buffer.from(`\r\n--${BOUNDARY}--\r\n`)]);
  const socket = net.connect(Number(new URL(base).port), "127.0.0.1");
  const chunks: Buffer[] = [];
  socket.on("data", (c: Buffer) => chunks.push(c));
  await once(socket, "connect");
  socket.write(
    `POST /api/uploads HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${jwt}\r\nConnection: close\r\n` +
      `Content-Type: multipart/form-data; boundary=${BOUNDARY}\r\nContent-Length: ${body.length}\r\n\r\n`,
  );
  const half = head.length + 16 * 1024;
  socket.write(body.subarray(0, half));
  return {
    async finish(): Promise<{ status: number; code: string }> {
      socket.write(body.subarray(half));
      await once(socket, "close");
      const text = Buffer.concat(chunks).toString();
      const json = JSON.parse(text.slice(text.indexOf("\r\n\r\n") + 4)) as { error?: { code?: string } };
      return { status: Number(text.slice(9, 12)), code: json.error?.code ?? "" };
    },
  };
}

/** Reads an SSE response to its end and returns the event names in order. */
async function sseEvents(res: Response): Promise<string[]> {
  const text = await res.text();
  return [...text.matchAll(/^event: (.+)$/gm)].map((m) => m[1] ?? "");
}

async function leftovers(userId: string, uploadIds: string[]): Promise<number> {
  const { rows } = await admin.query<{ n: string }>(
    `SELECT (SELECT count(*) FROM project WHERE user_id = $1) + (SELECT count(*) FROM task WHERE user_id = $1)
          + (SELECT count(*) FROM task_message WHERE user_id = $1) + (SELECT count(*) FROM upload WHERE user_id = $1)
          + (SELECT count(*) FROM mcp_server WHERE user_id = $1) AS n`,
    [userId],
  );
  const names = await readdir(cluster.uploadDir);
  const files = names.filter((n) => n.endsWith(".partial") || uploadIds.some((id) => n.startsWith(id))).length;
  return Number(rows[0]?.n ?? 0) + files;
}

describe("a JWT of a deleted account (identity + 2 API processes)", () => {
  it("writes nothing once delete-user answered, on either API, its streams and sockets end, and its data is gone", async () => {
    const [identity] = cluster.identities;
    const [a, b] = cluster.apis;
    if (!identity || !a || !b) throw new Error("cluster incomplete");
    const account = await signUp(identity.url);
    const other = await signUp(identity.url);
    const task = await call<{ data: { id: string } }>(`${a.url}/api/tasks`, { method: "POST", jwt: account.jwt, body: { title: "T" } });
    expect(task.status).toBe(201);
    const taskId = task.body.data.id;
    const form = new FormData();
    form.append("file", new Blob(["the user's bytes"], { type: "text/plain" }), "notes.txt");
    const uploaded = await fetch(`${a.url}/api/uploads`, {
      method: "POST",
      headers: { authorization: `Bearer ${account.jwt}` },
      body: form,
    });
    expect(uploaded.status).toBe(201);
    const uploadId = ((await uploaded.json()) as { id: string }).id;

    const stream = await fetch(`${b.url}/api/tasks/${taskId}/stream`, { headers: { authorization: `Bearer ${account.jwt}` } });
    expect(stream.status).toBe(200);
    const streamEvents = sseEvents(stream);
    const socket = new WebSocket(`${b.url.replace("http:", "ws:")}/api/ws?token=${account.jwt}`);
    const socketClosed = once(socket, "close");
    await once(socket, "open");
    const late = await halfUpload(a.url, account.jwt);
    await waitFor(
      "the upload in progress",
      async () => (await readdir(cluster.uploadDir)).some((n) => n.endsWith(".partial")) || undefined,
    );

    const deleted = await call(`${identity.url}/api/auth/delete-user`, {
      method: "POST",
      cookie: account.cookie,
      body: { password: account.password },
    });
    expect(deleted.status).toBe(200);
    const started = Date.now();

    for (const api of [a, b]) {
      for (const [path, body] of [
        ["/api/tasks", { title: "after" }],
        ["/api/projects", { name: "after" }],
        ["/api/mcp-servers", { name: "after", url: "https://mcp.example.com/mcp" }],
        [`/api/tasks/${taskId}/messages`, { text: "after" }],
      ] as const) {
        const res = await call(`${api.url}${path}`, { method: "POST", jwt: account.jwt, body });
        expect(res.status, `${api.name} ${path}`).toBe(401);
        expect(res.body).toMatchObject({ ok: false, error: { code: "unauthorized" } });
      }
      const again = new FormData();
      again.append("file", new Blob(["after"], { type: "text/plain" }), "after.txt");
      const upload = await fetch(`${api.url}/api/uploads`, {
        method: "POST",
        headers: { authorization: `Bearer ${account.jwt}` },
        body: again,
      });
      expect(upload.status, `${api.name} upload`).toBe(401);
    }
    expect(await late.finish()).toEqual({ status: 401, code: "unauthorized" });
    expect((await streamEvents).at(-1)).toBe("account-deleted");
    const [code] = (await socketClosed) as [number];
    expect(code).toBe(4003);

    await waitFor("nothing of the user left", async () => (await leftovers(account.userId, [uploadId])) === 0 || undefined, TARGET_MS, 50);
    expect(Date.now() - started).toBeLessThan(TARGET_MS);
    expect((await call(`${b.url}/api/tasks`, { method: "POST", jwt: other.jwt, body: { title: "unaffected" } })).status).toBe(201);
    expect(cluster.lines.filter((l) => /"statusCode":5\d\d|"code":"internal_error"/.test(l))).toEqual([]);
  }, 60_000);
});
