import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { isAuthVerifyError } from "./errors.js";
import {
  claims,
  expectCode,
  frozenClock,
  type JwksServer,
  makeKey,
  mint,
  startJwksServer,
  T0_SEC,
  type TestClock,
  type TestKey,
} from "./test-fixtures.js";
import { createVerifier, type Verifier, type VerifierOptions } from "./verify.js";

const MIN = 60_000;
let key: TestKey;
let rotated: TestKey;
let server: JwksServer;
let clock: TestClock;
let v: Verifier;

beforeAll(async () => {
  key = await makeKey("key-1");
  rotated = await makeKey("key-2");
});

async function setup(options: Partial<VerifierOptions> = {}): Promise<void> {
  server = await startJwksServer([key.publicJwk]);
  clock = frozenClock();
  v = createVerifier({ jwksUrl: server.url, now: clock.now, verifiedCache: false, ...options });
}

afterEach(async () => {
  v.close();
  await server.close();
});

/** A distinct valid token each call, so the verified cache (when on) never answers. */
let serial = 0;
const fresh = (signer: TestKey = key) => mint(signer, claims({ jti: `t${serial++}` }));

describe("first use", () => {
  it("fetches nothing at construction and exactly once on first use", async () => {
    await setup();
    expect(server.hits()).toBe(0);
    expect(v.stats().keySet.fetches).toBe(0);
    await v.verifyToken(await fresh());
    await v.verifyToken(await fresh());
    expect(server.hits()).toBe(1);
    expect(v.stats().keySet).toMatchObject({ fetches: 1, failures: 0, keys: 1 });
  });

  it("shares one in-flight fetch between concurrent first callers", async () => {
    await setup();
    const tokens = await Promise.all(Array.from({ length: 50 }, () => fresh()));
    const results = await Promise.all(tokens.map((t) => v.verifyToken(t)));
    expect(results.every((r) => r.userId === "user-123")).toBe(true);
    expect(server.hits()).toBe(1);
  });
});

describe("unknown kid refetch cooldown", () => {
  it("allows at most one refetch per 30 s under a flood of 1000 unknown-kid tokens", async () => {
    await setup();
    await v.verifyToken(await fresh());
    expect(server.hits()).toBe(1);

    // Right after a fetch, the cooldown forbids another one.
    const strangers = await Promise.all(Array.from({ length: 20 }, (_, i) => makeKey(`unknown-${i}`)));
    const flood = await Promise.all(Array.from({ length: 1000 }, (_, i) => mint(strangers[i % 20] as TestKey)));
    let errors = await Promise.allSettled(flood.map((t) => v.verifyToken(t)));
    expect(errors.every((r) => r.status === "rejected" && isAuthVerifyError(r.reason, "unknown_key"))).toBe(true);
    expect(server.hits()).toBe(1);

    // After the cooldown: the whole flood shares exactly one refetch.
    clock.advance(30_000);
    errors = await Promise.allSettled(flood.map((t) => v.verifyToken(t)));
    expect(errors.every((r) => r.status === "rejected" && isAuthVerifyError(r.reason, "unknown_key"))).toBe(true);
    expect(server.hits()).toBe(2);

    clock.advance(29_999);
    await Promise.allSettled(flood.slice(0, 100).map((t) => v.verifyToken(t)));
    expect(server.hits()).toBe(2);

    clock.advance(1);
    await expectCode(v.verifyToken(flood[0] as string), "unknown_key");
    expect(server.hits()).toBe(3);
    expect(v.stats().keySet.fetches).toBe(3);
  });

  it("picks up a rotated key once the cooldown allows a refetch", async () => {
    await setup();
    await v.verifyToken(await fresh());
    server.setKeys([key.publicJwk, rotated.publicJwk]);
    const token = await fresh(rotated);
    await expectCode(v.verifyToken(token), "unknown_key", token);
    clock.advance(30_000);
    expect((await v.verifyToken(token)).kid).toBe("key-2");
    expect(server.hits()).toBe(2);
  });
});

describe("max age", () => {
  it("refreshes a set that is 10 minutes old on next use, not before", async () => {
    await setup();
    await v.verifyToken(await fresh());
    clock.advance(10 * MIN - 1);
    await v.verifyToken(await fresh());
    expect(server.hits()).toBe(1);
    clock.advance(1);
    await v.verifyToken(await fresh());
    expect(server.hits()).toBe(2);
    await v.verifyToken(await fresh());
    expect(server.hits()).toBe(2);
  });

  it("honours custom cacheMaxAgeMs and cooldownMs", async () => {
    await setup({ cacheMaxAgeMs: MIN, cooldownMs: 1_000 });
    await v.verifyToken(await fresh());
    clock.advance(MIN);
    await v.verifyToken(await fresh());
    expect(server.hits()).toBe(2);
    clock.advance(1_000);
    await expectCode(v.verifyToken(await fresh(rotated)), "unknown_key");
    expect(server.hits()).toBe(3);
  });
});

describe("stale-if-error", () => {
  it.each(["error500", "reset", "not-json", "no-keys-array"] as const)(
    "keeps verifying with the last good set while the server fails (%s), then 503",
    async (mode) => {
      await setup({ staleIfErrorMs: 60 * MIN });
      await v.verifyToken(await fresh());
      server.setMode(mode);

      clock.advance(10 * MIN);
      expect((await v.verifyToken(await fresh())).userId).toBe("user-123");
      expect(v.stats().keySet).toMatchObject({ fetches: 2, failures: 1 });

      clock.advance(60 * MIN - 1); // last millisecond of the window
      expect((await v.verifyToken(await fresh())).userId).toBe("user-123");
      expect(v.stats().keySet.failures).toBe(2);

      clock.advance(1);
      const error = await expectCode(v.verifyToken(await fresh()), "jwks_unavailable");
      expect(error.status).toBe(503);
    },
  );

  it("retries a failing server at most once per cooldown", async () => {
    await setup();
    await v.verifyToken(await fresh());
    server.setMode("error500");
    clock.advance(10 * MIN);
    for (let i = 0; i < 20; i++) await v.verifyToken(await fresh());
    expect(server.hits()).toBe(2);
    clock.advance(30_000);
    await v.verifyToken(await fresh());
    expect(server.hits()).toBe(3);
  });

  it("jwks_unavailable (503) when the set was never fetched, and recovery when the server returns", async () => {
    await setup();
    server.setMode("error500");
    const token = await fresh();
    const error = await expectCode(v.verifyToken(token), "jwks_unavailable", token);
    expect(error.status).toBe(503);
    expect(error.cause).toBeInstanceOf(Error);
    await expectCode(v.verifyToken(token), "jwks_unavailable");
    expect(server.hits()).toBe(1);

    server.setMode("ok");
    clock.advance(30_000);
    expect((await v.verifyToken(token)).userId).toBe("user-123");
    expect(v.stats().keySet).toMatchObject({ fetches: 2, failures: 1, keys: 1 });
  });

  it("recovers after the stale window passed", async () => {
    await setup({ staleIfErrorMs: 0 });
    await v.verifyToken(await fresh());
    server.setMode("reset");
    clock.advance(10 * MIN);
    await expectCode(v.verifyToken(await fresh()), "jwks_unavailable");
    server.setMode("ok");
    clock.advance(30_000);
    expect((await v.verifyToken(await fresh())).userId).toBe("user-123");
  });

  it("times out a hanging server and reports jwks_unavailable", async () => {
    await setup({ fetchTimeoutMs: 100 });
    server.setMode("hang");
    const started = Date.now();
    await expectCode(v.verifyToken(await fresh()), "jwks_unavailable");
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(v.stats().keySet.failures).toBe(1);
  });
});

describe("expiry of tokens is independent of the key set", () => {
  it("an expired token is refused even when the set must be refreshed", async () => {
    await setup();
    const token = await mint(key, claims({ exp: T0_SEC + 1 }));
    clock.advance(10 * MIN);
    await expectCode(v.verifyToken(token), "token_expired", token);
  });
});
