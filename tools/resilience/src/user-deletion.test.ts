import { readdir } from "node:fs/promises";
import { createTestDatabase, type TestDatabase } from "@app/db/testing";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Account, call, secret, signUp, waitFor } from "./client.js";
import { type Cluster, startCluster } from "./cluster.js";

// Account deletion across processes: identity writes the user_deletion outbox and NOTIFYs
// auth_user_deleted; the API processes (two, sharing the work) delete the user's rows and files.
// Target: nothing of the user left within 10 s, with the APIs up at the moment of deletion and
// with both APIs down then (they catch up when they start).
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

/** A signed-up user with a project, a chat, a task and an uploaded file, made through the API. */
async function userWithData(): Promise<Account & { uploadId: string }> {
  const identity = cluster.identities[0];
  const api = cluster.apis[0];
  if (!identity || !api) throw new Error("cluster incomplete");
  const account = await signUp(identity.url);
  for (const [path, body] of [
    ["/api/projects", { name: "P" }],
    ["/api/chats", { title: "C" }],
    ["/api/tasks", { title: "T" }],
  ] as const) {
    expect((await call(`${api.url}${path}`, { method: "POST", jwt: account.jwt, body })).status).toBe(201);
  }
  const form = new FormData();
  form.append("file", new Blob(["the user's bytes"], { type: "text/plain" }), "notes.txt");
  const res = await fetch(`${api.url}/api/uploads`, { method: "POST", headers: { authorization: `Bearer ${account.jwt}` }, body: form });
  expect(res.status).toBe(201);
  return { ...account, uploadId: ((await res.json()) as { id: string }).id };
}

/** Rows the API keeps for a user, all tables together, plus the user's files on disk. */
async function leftovers(user: { userId: string; uploadId: string }): Promise<number> {
  const { rows } = await admin.query<{ n: string }>(
    `SELECT (SELECT count(*) FROM project WHERE user_id = $1) + (SELECT count(*) FROM chat WHERE user_id = $1)
          + (SELECT count(*) FROM task WHERE user_id = $1) + (SELECT count(*) FROM upload WHERE user_id = $1)
          + (SELECT count(*) FROM agent WHERE user_id = $1) + (SELECT count(*) FROM mcp_server WHERE user_id = $1)
          + (SELECT count(*) FROM user_role WHERE user_id = $1) AS n`,
    [user.userId],
  );
  const files = (await readdir(cluster.uploadDir)).filter((f) => f.startsWith(user.uploadId)).length;
  return Number(rows[0]?.n ?? 0) + files;
}

async function deleteUser(account: Account): Promise<void> {
  const identity = cluster.identities[0];
  if (!identity) throw new Error("cluster incomplete");
  const res = await call(`${identity.url}/api/auth/delete-user`, {
    method: "POST",
    cookie: account.cookie,
    body: { password: account.password },
  });
  expect(res.status).toBe(200);
}

describe("account deletion (identity + 2 API processes)", () => {
  it(`leaves nothing of the user in the API within ${TARGET_MS / 1000} s`, async () => {
    const user = await userWithData();
    const other = await userWithData();
    expect(await leftovers(user)).toBeGreaterThan(0);
    const started = Date.now();
    await deleteUser(user);
    await waitFor("the API's part of the deletion", async () => (await leftovers(user)) === 0 || undefined, TARGET_MS, 50);
    expect(Date.now() - started).toBeLessThan(TARGET_MS);
    expect(await leftovers(other)).toBe(5);
  }, 60_000);

  it(`catches up within ${TARGET_MS / 1000} s of starting when every API was down at the moment of deletion`, async () => {
    const user = await userWithData();
    await Promise.all(cluster.apis.map((api) => api.stop()));
    await deleteUser(user);
    expect(await leftovers(user)).toBeGreaterThan(0);
    await Promise.all(cluster.apis.map((api) => api.start()));
    const started = Date.now();
    await waitFor("the API's catch-up", async () => (await leftovers(user)) === 0 || undefined, TARGET_MS, 50);
    expect(Date.now() - started).toBeLessThan(TARGET_MS);
    const { rows } = await admin.query("SELECT api_done_at FROM user_deletion WHERE user_id = $1", [user.userId]);
    expect(rows[0]?.api_done_at).toBeInstanceOf(Date);
  }, 120_000);
});
