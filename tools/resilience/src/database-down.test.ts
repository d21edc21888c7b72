import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { type EmbeddedPostgresHandle, freePort, startEmbeddedPostgres } from "@app/db/embedded";
import { migrate } from "@app/db/migrate";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, secret, signIn, signUp, waitFor } from "./client.js";
import { type Cluster, startCluster } from "./cluster.js";

// PostgreSQL down, then back: authentication on the API is unaffected (no database involved),
// business routes that need data answer 503, identity answers 503, and both recover by themselves
// when the server returns (restarted on the same data directory and port). Bursts of concurrent
// requests during and after the outage show the pools neither hang nor stay exhausted.
let dir: string;
let port: number;
let pg: EmbeddedPostgresHandle | undefined;
let cluster: Cluster;

const startPg = () => startEmbeddedPostgres({ dataDir: path.join(dir, "data"), port, persistent: true });

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "resilience-pg-"));
  port = await freePort();
  pg = await startPg();
  await migrate(pg.url);
  cluster = await startCluster({ databaseUrl: pg.url, authSecret: secret(), dataEncryptionKey: secret() });
}, 120_000);
afterAll(async () => {
  await cluster?.stop();
  await pg?.stop();
  await rm(dir, { recursive: true, force: true });
}, 60_000);

const burst = async (n: number, run: () => Promise<{ status: number }>) =>
  (await Promise.all(Array.from({ length: n }, run))).map((r) => r.status);

describe("PostgreSQL down or restarted", () => {
  it("keeps authenticating, answers 503 where data is needed, and recovers without a restart", async () => {
    const [identity] = cluster.identities;
    const [api] = cluster.apis;
    if (!identity || !api || !pg) throw new Error("setup incomplete");
    const account = await signUp(identity.url);
    const tasks = () => call(`${api.url}/api/tasks`, { jwt: account.jwt });
    expect((await call(`${api.url}/api/tasks`, { method: "POST", jwt: account.jwt, body: { title: "before" } })).status).toBe(201);

    await pg.stop();

    // Authentication needs no database: /api/me (claims only) answers 200.
    const me = await call<{ data: { id: string } }>(`${api.url}/api/me`, { jwt: account.jwt });
    expect(me.status).toBe(200);
    expect(me.body.data.id).toBe(account.userId);
    expect((await call(`${api.url}/api/me`, { jwt: "x.y.z" })).status).toBe(401);
    // Data routes: 503 service_unavailable in the envelope, fast, for a whole burst.
    const down = await tasks();
    expect(down.status).toBe(503);
    expect(down.body).toEqual({ ok: false, error: { code: "service_unavailable", message: "service unavailable" } });
    expect(new Set(await burst(40, tasks))).toEqual(new Set([503]));
    // Identity: 503 for what needs the database, never 500.
    expect((await signIn(identity.url, account)).status).toBe(503);
    expect((await call(`${identity.url}/api/auth/get-session`, { method: "POST", cookie: account.cookie })).status).toBe(503);
    expect((await call(`${identity.url}/readyz`)).status).toBe(503);
    expect((await call(`${api.url}/readyz`)).status).toBe(503);
    expect(new Set(await burst(20, () => signIn(identity.url, account)))).toEqual(new Set([503]));

    pg = await startPg();

    // Both recover by themselves; a burst afterwards finds the pools healthy.
    await waitFor("identity back", async () => (await signIn(identity.url, account)).status === 200, 30_000, 250);
    await waitFor("api back", async () => (await tasks()).status === 200, 30_000, 250);
    expect(new Set(await burst(40, tasks))).toEqual(new Set([200]));
    expect(
      new Set(await burst(10, () => call(`${identity.url}/api/auth/get-session`, { method: "POST", cookie: account.cookie }))),
    ).toEqual(new Set([200]));
    await waitFor("api ready (events reconnected)", async () => (await call(`${api.url}/readyz`)).status === 200, 30_000, 250);
    const list = await call<{ data: { title: string }[] }>(`${api.url}/api/tasks`, { jwt: account.jwt });
    expect(list.body.data.map((t) => t.title)).toEqual(["before"]);
    expect(identity.running && api.running).toBe(true);
    expect(cluster.lines.filter((l) => /"statusCode":500|"code":"internal_error"|"level":60/.test(l))).toEqual([]);
  }, 120_000);
});
