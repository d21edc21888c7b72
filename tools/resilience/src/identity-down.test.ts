import { createTestDatabase, type TestDatabase } from "@app/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, jwtFor, secret, signUp, waitFor } from "./client.js";
import { type Cluster, startCluster } from "./cluster.js";

// Identity down: the API keeps verifying tokens signed by keys of its last good key set for the
// stale-if-error window, then answers 503 jwks_unavailable (never a crash), and recovers by itself
// when identity returns. The API's key set timings are shortened so this runs in seconds:
// max age 500 ms, cooldown 250 ms, stale window 5 s.
let database: TestDatabase;
let cluster: Cluster;

beforeAll(async () => {
  database = await createTestDatabase();
  cluster = await startCluster({
    databaseUrl: database.url,
    authSecret: secret(),
    dataEncryptionKey: secret(),
    envFor: (name): Record<string, string> =>
      name.startsWith("api") ? { JWKS_CACHE_MAX_AGE_MS: "500", JWKS_COOLDOWN_MS: "250", JWKS_STALE_IF_ERROR_MS: "5000" } : {},
  });
});
afterAll(async () => {
  await cluster?.stop();
  await database?.drop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("identity down", () => {
  it("serves from the last good key set within the stale window, 503 jwks_unavailable beyond it, recovery after", async () => {
    const [identity] = cluster.identities;
    const [api] = cluster.apis;
    if (!identity || !api) throw new Error("cluster incomplete");
    const me = (jwt: string) => call<{ ok: boolean; error?: { code: string } }>(`${api.url}/api/me`, { jwt });

    const account = await signUp(identity.url);
    expect((await me(account.jwt)).status).toBe(200);
    const unseen = await jwtFor(identity.url, account.cookie); // never presented before the outage
    await identity.stop();
    expect(identity.running).toBe(false);

    // Past the max age (the set was loaded at most 500 ms before the last request, so its window
    // ends at least 5 s after it): every refresh fails, the last good set is still used.
    await sleep(800);
    expect((await me(unseen)).status).toBe(200);
    expect((await me(account.jwt)).status).toBe(200);

    // Beyond the stale window: 503 jwks_unavailable with Retry-After, for cached and new tokens alike.
    const seen: number[] = [];
    const refused = await waitFor(
      "jwks_unavailable",
      async () => {
        const res = await me(account.jwt);
        seen.push(res.status);
        return res.status === 503 ? res : undefined;
      },
      15_000,
      250,
    );
    expect(refused.body).toEqual({ ok: false, error: { code: "jwks_unavailable", message: expect.any(String) } });
    expect(refused.headers.get("retry-after")).toBe("30");
    expect((await me(unseen)).status).toBe(503);
    expect(new Set(seen)).toEqual(new Set([200, 503]));
    // No crash: the process is up, its health check answers, and requests that need no key do too.
    expect(api.running).toBe(true);
    expect((await call(`${api.url}/healthz`)).status).toBe(200);
    expect((await call(`${api.url}/api/me`)).status).toBe(401);

    // Identity returns: the API recovers by itself (next fetch after the cooldown).
    await identity.start();
    await waitFor("recovery", async () => (await me(account.jwt)).status === 200, 15_000, 250);
    expect((await me(unseen)).status).toBe(200);
    expect((await me(await jwtFor(identity.url, account.cookie))).status).toBe(200);
    // Degraded, never broken: no 500 and no fatal line in the API's log.
    expect(cluster.lines.filter((l) => /"statusCode":500|"code":"internal_error"|"level":60/.test(l))).toEqual([]);
  }, 60_000);
});
