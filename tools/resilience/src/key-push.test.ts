import { createTestDatabase, type TestDatabase } from "@app/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, jwtFor, secret, signIn, signUp } from "./client.js";
import { type Cluster, startCluster } from "./cluster.js";

// Key set push across processes: two identity and two API processes with the contract's key set
// cache (10 min max age, 30 s cooldown). Identity restarts with a new AUTH_SECRET: its key set
// changes and it announces that on `auth_key_set`; every API refreshes at once. Target: old JWTs
// refused by every API and new JWTs accepted by every API within 2 s each, and no 5xx at all.
const TARGET_MS = 2_000;
let database: TestDatabase;
let cluster: Cluster;

beforeAll(async () => {
  database = await createTestDatabase();
  cluster = await startCluster({
    databaseUrl: database.url,
    authSecret: secret(),
    dataEncryptionKey: secret(),
    identities: 2,
    apis: 2,
    env: { JWKS_CACHE_MAX_AGE_MS: String(10 * 60_000), JWKS_COOLDOWN_MS: "30000" },
  });
}, 120_000);
afterAll(async () => {
  await cluster?.stop();
  await database?.drop();
});

const statuses: number[] = [];
async function me(apiUrl: string, jwt: string): Promise<number> {
  const { status } = await call(`${apiUrl}/api/me`, { jwt, timeoutMs: 5_000 });
  statuses.push(status);
  return status;
}

/** Milliseconds from `since` until every API answers `wanted` for `jwt` (polled every 50 ms, bounded). */
async function untilEveryApi(jwt: string, wanted: number, since: number, limitMs = 15_000): Promise<number> {
  for (;;) {
    const answers = await Promise.all(cluster.apis.map((api) => me(api.url, jwt)));
    if (answers.every((s) => s === wanted)) return Date.now() - since;
    if (Date.now() - since > limitMs) throw new Error(`APIs still answer ${answers.join(", ")} after ${limitMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("key set push (2 identity + 2 API processes)", () => {
  it("after identity restarts with a new AUTH_SECRET, every API refuses old JWTs and accepts new ones within 2 s; no 5xx", async () => {
    const [first, second] = cluster.identities;
    if (!first || !second) throw new Error("cluster incomplete");
    const account = await signUp(first.url);
    // Both APIs hold the old key set (and have verified, so cached, the old JWT).
    for (const api of cluster.apis) expect(await me(api.url, account.jwt)).toBe(200);

    await Promise.all(cluster.identities.map((s) => s.stop()));
    const newSecret = secret();
    for (const s of cluster.identities) s.env = { ...s.env, AUTH_SECRET: newSecret };
    await Promise.all(cluster.identities.map((s) => s.start()));
    const restarted = Date.now();

    const refusedAfter = await untilEveryApi(account.jwt, 401, restarted);
    const again = await signIn(first.url, account);
    expect(again.status).toBe(200);
    const fresh = await jwtFor(second.url, again.cookie ?? "");
    const issued = Date.now();
    const acceptedAfter = await untilEveryApi(fresh, 200, issued);

    console.info(
      `key push: old JWT refused by every API ${refusedAfter} ms after the restart; new JWT accepted ${acceptedAfter} ms after issue`,
    );
    expect(refusedAfter).toBeLessThanOrEqual(TARGET_MS);
    expect(acceptedAfter).toBeLessThanOrEqual(TARGET_MS);
    expect(statuses.filter((s) => s >= 500)).toEqual([]);
    expect(cluster.lines.filter((l) => /"statusCode":5\d\d|"code":"internal_error"/.test(l))).toEqual([]);
  }, 120_000);
});
