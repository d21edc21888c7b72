import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { AuthVerifyError } from "./errors.js";
import {
  claims,
  expectCode,
  frozenClock,
  type JwksServer,
  makeKey,
  mint,
  startJwksServer,
  T0,
  T0_SEC,
  type TestClock,
  type TestKey,
} from "./test-fixtures.js";
import { createVerifier, type Verifier } from "./verify.js";

// verifyNow is verify without a promise in the steady state of a repeated token: these tests pin
// down when it answers synchronously (a cache hit on a fresh key set, a refusal before jose), when it
// returns a promise (every token jose must verify), and that both ways keep verify's codes and counters.

let key: TestKey;
let other: TestKey;
let server: JwksServer;
let clock: TestClock;
let v: Verifier;

beforeAll(async () => {
  key = await makeKey("key-1");
  other = await makeKey("key-other");
});

async function setup(maxAgeMs = 600_000): Promise<void> {
  server = await startJwksServer([key.publicJwk]);
  clock = frozenClock();
  v = createVerifier({ jwksUrl: server.url, now: clock.now, cacheMaxAgeMs: maxAgeMs, issuer: "https://auth.test", audience: "api.test" });
}

afterEach(async () => {
  v.close();
  await server.close();
});

/** The synchronous failure of `fn`, required to be an AuthVerifyError. */
function thrown(fn: () => unknown): AuthVerifyError {
  let error: unknown;
  try {
    const result = fn();
    error = result instanceof Promise ? new Error("expected a synchronous throw, got a promise") : new Error("expected a throw");
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(AuthVerifyError);
  return error as AuthVerifyError;
}

describe("verifyNow", () => {
  it("returns a promise for a token jose must verify, then answers the cache hit synchronously", async () => {
    await setup();
    const token = await mint(key);
    const first = v.verifyNow(`Bearer ${token}`);
    expect(first).toBeInstanceOf(Promise);
    expect((await first).userId).toBe("user-123");
    // Key set fresh and the kid known: jose `jwtVerify` is asynchronous, so still a promise...
    const second = v.verifyNow(`Bearer ${token}`);
    expect(second).toBeInstanceOf(Promise);
    const verified = await second;
    // ...but the cache hit (the token was admitted on its second sighting) is not.
    const third = v.verifyNow(`Bearer ${token}`);
    expect(third).not.toBeInstanceOf(Promise);
    expect(third).toBe(verified);
    expect(v.stats()).toMatchObject({ verifications: 3, cacheHits: 1, cryptoVerifications: 2, failures: 0 });
    expect(server.hits()).toBe(1);
  });

  it("throws a failure synchronously, with verify's code, when jose was not needed; rejects otherwise", async () => {
    await setup();
    await v.verify(`Bearer ${await mint(key)}`);
    const before = v.stats();
    expect(thrown(() => v.verifyNow(undefined)).code).toBe("missing_token");
    expect(thrown(() => v.verifyNow("Basic abc")).code).toBe("malformed_token");
    expect(thrown(() => v.verifyNow("Bearer not.a.jwt")).code).toBe("invalid_signature");
    const expired = await mint(key, claims({ exp: T0_SEC - 60 }));
    const pendingExpired = v.verifyNow(`Bearer ${expired}`);
    expect(pendingExpired).toBeInstanceOf(Promise);
    await expectCode(pendingExpired as Promise<unknown>, "token_expired", expired);
    const wrongAudience = await mint(key, claims({ aud: "someone-else" }));
    const error = await expectCode(v.verifyNow(`Bearer ${wrongAudience}`) as Promise<unknown>, "invalid_claims", wrongAudience);
    await expectCode(v.verify(`Bearer ${wrongAudience}`), error.code);
    expect(v.stats()).toMatchObject({
      verifications: before.verifications + 6,
      failures: before.failures + 6,
    });
  });

  it("returns a promise that rejects with unknown_key for a kid the fresh set does not hold", async () => {
    await setup();
    await v.verify(`Bearer ${await mint(key)}`);
    const foreign = await mint(other);
    const pending = v.verifyNow(`Bearer ${foreign}`);
    expect(pending).toBeInstanceOf(Promise);
    await expectCode(pending as Promise<unknown>, "unknown_key", foreign);
    expect(v.stats().failures).toBe(1);
  });

  it("goes back to a promise once the key set is due for a refresh, even for a cached token", async () => {
    await setup(60_000);
    const token = await mint(key);
    await v.verify(`Bearer ${token}`);
    await v.verify(`Bearer ${token}`);
    expect(v.verifyNow(`Bearer ${token}`)).not.toBeInstanceOf(Promise);
    clock.set(T0 + 60_000);
    const pending = v.verifyNow(`Bearer ${token}`);
    expect(pending).toBeInstanceOf(Promise);
    expect((await pending).userId).toBe("user-123");
    expect(server.hits()).toBe(2);
    // Refreshed: synchronous again, still answered from the cache.
    const hitsBefore = v.stats().cacheHits;
    expect(v.verifyNow(`Bearer ${token}`)).not.toBeInstanceOf(Promise);
    expect(v.stats().cacheHits).toBe(hitsBefore + 1);
  });

  it("rejects (not throws) when a due refresh finds the identity down past the stale window", async () => {
    server = await startJwksServer([key.publicJwk]);
    clock = frozenClock();
    v = createVerifier({ jwksUrl: server.url, now: clock.now, cacheMaxAgeMs: 60_000, staleIfErrorMs: 0, fetchTimeoutMs: 500 });
    const token = await mint(key);
    await v.verify(`Bearer ${token}`);
    await v.verify(`Bearer ${token}`);
    server.setMode("error500");
    clock.set(T0 + 61_000);
    const pending = v.verifyNow(`Bearer ${token}`);
    expect(pending).toBeInstanceOf(Promise);
    await expectCode(pending as Promise<unknown>, "jwks_unavailable");
  });
});
