import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { createTestDatabase, type TestDatabase } from "@app/db/testing";
import { ROOT } from "@app/stack";
import { decodeProtectedHeader } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, jwtFor, secret, signIn, signUp, waitFor } from "./client.js";
import { type Cluster, startCluster } from "./cluster.js";

// Restarts and key rotation, in this order on one identity and one API process:
// - an identity restart keeps every earlier JWT valid;
// - the documented rotation command (`pnpm keys:rotate` runs this same CLI) publishes a new key at
//   once, it signs after the activation delay (2 s here instead of 10.5 min), and tokens signed by
//   either key verify on the API during the overlap;
// - a changed AUTH_SECRET with both services restarted makes every earlier JWT answer 401 and
//   every earlier session cookie get no JWT (everyone is signed out), identity issues new ones
//   after a new sign-in, and no request of the whole file answers 5xx.
const run = promisify(execFile);
const AUTH_SECRET = secret();
let database: TestDatabase;
let cluster: Cluster;
const statuses: number[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  cluster = await startCluster({
    databaseUrl: database.url,
    authSecret: AUTH_SECRET,
    dataEncryptionKey: secret(),
    env: { KEY_ACTIVATION_DELAY_MS: "2000", JWKS_CACHE_MAX_AGE_MS: "1000", JWKS_COOLDOWN_MS: "200" },
  });
});
afterAll(async () => {
  await cluster?.stop();
  await database?.drop();
});

function services() {
  const [identity] = cluster.identities;
  const [api] = cluster.apis;
  if (!identity || !api) throw new Error("cluster incomplete");
  return { identity, api };
}

async function tracked(url: string, options: Parameters<typeof call>[1] = {}) {
  const res = await call<{ ok: boolean; error?: { code: string } }>(url, options);
  statuses.push(res.status);
  return res;
}

const kids = async (url: string) => (await call<{ keys: { kid: string }[] }>(`${url}/api/auth/jwks`)).body.keys.map((k) => k.kid);

describe("restarts", () => {
  it("an identity restart keeps earlier JWTs valid (also for an API restarted meanwhile)", async () => {
    const { identity, api } = services();
    const account = await signUp(identity.url);
    expect((await tracked(`${api.url}/api/me`, { jwt: account.jwt })).status).toBe(200);
    const before = await kids(identity.url);

    await identity.restart();
    expect(await kids(identity.url)).toEqual(before);
    expect((await tracked(`${api.url}/api/me`, { jwt: account.jwt })).status).toBe(200);
    const after = await jwtFor(identity.url, account.cookie);
    expect((await tracked(`${api.url}/api/me`, { jwt: after })).status).toBe(200);

    await api.restart(); // a fresh key set from the restarted identity
    expect((await tracked(`${api.url}/api/me`, { jwt: account.jwt })).status).toBe(200);
    expect((await tracked(`${api.url}/api/tasks`, { jwt: after })).status).toBe(200);
  }, 60_000);
});

describe("key rotation", () => {
  it("the rotate command publishes a new key first, it signs after the delay, and both keys verify", async () => {
    const { identity, api } = services();
    const account = await signUp(identity.url);
    const oldKid = decodeProtectedHeader(account.jwt).kid;
    expect((await tracked(`${api.url}/api/me`, { jwt: account.jwt })).status).toBe(200);

    const { stdout } = await run(process.execPath, [`${ROOT}/apps/identity/dist/cli/rotate-keys.js`], {
      env: {
        PATH: process.env.PATH ?? "",
        DATABASE_URL: database.url,
        AUTH_SECRET,
        // The CLI refuses an activation delay shorter than the verifiers' max age + cooldown
        // (packages/http-kit/src/settings/token.ts), so it gets the cluster's short values too.
        KEY_ACTIVATION_DELAY_MS: "2000",
        JWKS_CACHE_MAX_AGE_MS: "1000",
        JWKS_COOLDOWN_MS: "200",
        LOG_LEVEL: "warn",
      },
    });
    const newKid = /new signing key (\S+):/.exec(stdout)?.[1];
    expect(newKid).toEqual(expect.any(String));
    expect(stdout).toContain(`signing now with ${oldKid}`);

    // Published at once (newest first) while the old key still signs.
    expect(await kids(identity.url)).toEqual([newKid, oldKid]);
    const beforeSwitch = await jwtFor(identity.url, account.cookie);
    expect(decodeProtectedHeader(beforeSwitch).kid).toBe(oldKid);

    // After the activation delay the new key signs.
    const afterSwitch = await waitFor(
      "the new key to sign",
      async () => {
        const jwt = await jwtFor(identity.url, account.cookie);
        return decodeProtectedHeader(jwt).kid === newKid ? jwt : undefined;
      },
      10_000,
      200,
    );
    // Tokens of both keys verify during the overlap; the old key stays published.
    for (const jwt of [account.jwt, beforeSwitch, afterSwitch]) expect((await tracked(`${api.url}/api/me`, { jwt })).status).toBe(200);
    expect(await kids(identity.url)).toEqual([newKid, oldKid]);
  }, 60_000);
});

describe("AUTH_SECRET changed", () => {
  it("with both services restarted, every earlier JWT and session answers 401; new ones work; never a 5xx", async () => {
    const { identity, api } = services();
    const accounts = await Promise.all([signUp(identity.url), signUp(identity.url)]);
    for (const a of accounts) expect((await tracked(`${api.url}/api/me`, { jwt: a.jwt })).status).toBe(200);

    await api.stop();
    await identity.restart({ AUTH_SECRET: secret() });
    await api.start();

    for (const a of accounts) {
      const old = await tracked(`${api.url}/api/me`, { jwt: a.jwt });
      expect(old.status).toBe(401);
      expect(old.body.error?.code).toBe("unknown_key");
      expect((await tracked(`${api.url}/api/tasks`, { jwt: a.jwt })).status).toBe(401);
    }
    // Every earlier session is over: its cookie gets no JWT. The user signs in again and gets one that works.
    const [first, second] = accounts;
    if (!first || !second) throw new Error("no accounts");
    const stale = await tracked(`${identity.url}/api/auth/get-session`, { method: "POST", cookie: second.cookie });
    expect(stale.status).toBe(401);
    const again = await signIn(identity.url, first);
    statuses.push(again.status);
    expect(again.status).toBe(200);
    const fresh = await jwtFor(identity.url, again.cookie ?? "");
    expect((await tracked(`${api.url}/api/me`, { jwt: fresh })).status).toBe(200);
    expect((await tracked(`${api.url}/api/tasks`, { jwt: fresh })).status).toBe(200);
    expect(await kids(identity.url)).toHaveLength(1);

    expect(statuses.filter((s) => s >= 500)).toEqual([]);
    expect(cluster.lines.filter((l) => /"statusCode":5\d\d|"code":"internal_error"/.test(l))).toEqual([]);
  }, 60_000);
});
