import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
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
import { createVerifier, type Verifier, type VerifierOptions } from "./verify.js";

// Counts the Ed25519 signature checks the verifier makes: jose calls WebCrypto `subtle.verify`
// (passed through to the real one).
const signatureChecks = {
  get count(): number {
    return subtleVerify.mock.calls.length;
  },
};
const subtleVerify = vi.spyOn(globalThis.crypto.subtle, "verify");

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
  v = createVerifier({ jwksUrl: server.url, now: clock.now, ...options });
}

afterEach(async () => {
  v.close();
  await server.close();
});

/** Verifies `token` twice: a token enters the cache on its second sighting. Returns the second result. */
async function warm(token: string) {
  await v.verifyToken(token);
  return v.verifyToken(token);
}

describe("verified-token cache", () => {
  it("answers a repeated token without the crypto path", async () => {
    await setup();
    const token = await mint(key);
    const before = signatureChecks.count;
    const first = await v.verify(`Bearer ${token}`);
    expect(signatureChecks.count - before).toBe(1);
    const second = await v.verify(`Bearer ${token}`); // second sighting: verified again, then cached
    expect(second).toEqual(first);
    expect(signatureChecks.count - before).toBe(2);
    for (let i = 0; i < 100; i++) expect(await v.verify(`Bearer ${token}`)).toBe(second);
    expect(await v.verifyToken(token)).toBe(second);
    expect(signatureChecks.count - before).toBe(2);
    expect(v.stats()).toMatchObject({ verifications: 103, cacheHits: 101, cryptoVerifications: 2, failures: 0 });
  });

  it("admits a token on its second sighting only", async () => {
    await setup();
    const token = await mint(key);
    await v.verifyToken(token);
    expect(v.stats().cache).toMatchObject({ size: 0, deferred: 1 });
    await v.verifyToken(token);
    expect(v.stats().cache).toMatchObject({ size: 1, deferred: 1 });
    await v.verifyToken(token);
    expect(v.stats()).toMatchObject({ cacheHits: 1, cryptoVerifications: 2 });
  });

  it("a flood of one-shot tokens neither evicts a cached token nor fills the cache", async () => {
    await setup({ verifiedCache: { maxEntries: 4 } });
    const kept = await mint(key, claims({ jti: "kept" }));
    await warm(kept);
    const flood = await Promise.all(Array.from({ length: 200 }, (_, i) => mint(key, claims({ jti: `once-${i}` }))));
    for (const t of flood) expect((await v.verifyToken(t)).userId).toBe("user-123");
    expect(v.stats().cache).toMatchObject({ size: 1, evictions: 0, deferred: 201 });
    const before = v.stats().cryptoVerifications;
    await v.verifyToken(kept);
    expect(v.stats().cryptoVerifications).toBe(before);
  });

  it("returns frozen results so a caller cannot poison the cache", async () => {
    await setup();
    const token = await mint(key, claims({ profile: { name: "Ada" } }));
    const result = await v.verifyToken(token);
    expect(Object.isFrozen(result)).toBe(true);
    expect(Object.isFrozen(result.claims.profile)).toBe(true);
    expect(() => {
      (result as { userId: string }).userId = "admin";
    }).toThrow(TypeError);
    expect((await v.verifyToken(token)).userId).toBe("user-123");
  });

  it("stops serving an entry after its exp (+ tolerance), with a frozen clock", async () => {
    await setup();
    const token = await mint(key, claims({ exp: T0_SEC + 60 }));
    await warm(token);
    clock.set(T0 + 64_999);
    await v.verifyToken(token);
    expect(v.stats().cryptoVerifications).toBe(2);
    clock.set(T0 + 65_000);
    await expectCode(v.verifyToken(token), "token_expired", token);
    expect(v.stats().cache.size).toBe(0);
  });

  it("stops serving an entry once a refresh drops its kid", async () => {
    await setup();
    const oldToken = await mint(key);
    await warm(oldToken);
    expect(v.stats().cache.size).toBe(1);

    server.setKeys([rotated.publicJwk]);
    clock.advance(10 * 60_000);
    const newToken = await mint(rotated);
    expect((await warm(newToken)).kid).toBe("key-2");
    expect(v.stats().keySet.fetches).toBe(2);
    expect(v.stats().cache.size).toBe(1);
    await expectCode(v.verifyToken(oldToken), "unknown_key", oldToken);
  });

  it("drops entries whose kid now names different key material", async () => {
    await setup();
    const token = await mint(key);
    await warm(token);
    expect(v.stats().cache.size).toBe(1);
    const impostor = await makeKey("key-1");
    server.setKeys([impostor.publicJwk]);
    await v.keySet.reload();
    await expectCode(v.verifyToken(token), "invalid_signature", token);
  });

  it("keeps entries whose key survives a refresh", async () => {
    await setup();
    const token = await mint(key);
    await warm(token);
    server.setKeys([key.publicJwk, rotated.publicJwk]);
    await v.keySet.reload();
    await v.verifyToken(token);
    expect(v.stats().cryptoVerifications).toBe(2);
  });

  it("respects the LRU bound", async () => {
    await setup({ verifiedCache: { maxEntries: 2 } });
    const tokens = await Promise.all([0, 1, 2].map((i) => mint(key, claims({ jti: `j${i}` }))));
    for (const t of tokens) await warm(t);
    expect(v.stats().cache).toMatchObject({ size: 2, evictions: 1 });
    await v.verifyToken(tokens[2] as string);
    await v.verifyToken(tokens[1] as string);
    expect(v.stats().cryptoVerifications).toBe(6);
    await v.verifyToken(tokens[0] as string);
    expect(v.stats().cryptoVerifications).toBe(7);
  });

  it("can be disabled for benchmarks", async () => {
    await setup({ verifiedCache: false });
    const token = await mint(key);
    for (let i = 0; i < 3; i++) await v.verifyToken(token);
    expect(v.stats()).toMatchObject({ cacheHits: 0, cryptoVerifications: 3 });
    expect(v.stats().cache.size).toBe(0);
  });

  it("never caches a refused token", async () => {
    await setup();
    const token = await mint(key, claims({ iss: "x" }));
    const strict = createVerifier({ jwksUrl: server.url, now: clock.now, issuer: "https://auth.test" });
    await expectCode(strict.verifyToken(token), "invalid_claims");
    await expectCode(strict.verifyToken(token), "invalid_claims");
    expect(strict.stats()).toMatchObject({ cryptoVerifications: 2, cacheHits: 0, failures: 2 });
    strict.close();
  });

  // Regression: a cache hit used to be served without looking at the key set at all, so a token
  // verified once kept answering 200 after the key set was past its stale-if-error window (the
  // identity service down for hours) or after its key was rotated out.
  it("refuses a cached token with jwks_unavailable once the key set is past its stale window", async () => {
    await setup({ staleIfErrorMs: 60_000 });
    const token = await mint(key);
    await warm(token);
    server.setMode("error500");
    clock.advance(10 * 60_000 + 59_999); // past max age, inside the stale window
    expect((await v.verifyToken(token)).userId).toBe("user-123");
    clock.advance(1);
    const error = await expectCode(v.verifyToken(token), "jwks_unavailable", token);
    expect(error.status).toBe(503);
    server.setMode("ok");
    clock.advance(30_000);
    expect((await v.verifyToken(token)).userId).toBe("user-123");
  });

  it("refuses a cached token whose kid a max-age refresh removed, with no other token triggering it", async () => {
    await setup();
    const token = await mint(key);
    await warm(token);
    server.setKeys([rotated.publicJwk]);
    clock.advance(10 * 60_000);
    await expectCode(v.verifyToken(token), "unknown_key", token);
    expect(v.stats().keySet.fetches).toBe(2);
  });

  it("serves hits without touching the key set while it is fresh", async () => {
    await setup();
    const token = await mint(key);
    await warm(token);
    server.setMode("error500");
    clock.advance(10 * 60_000 - 1);
    for (let i = 0; i < 10; i++) await v.verifyToken(token);
    expect(server.hits()).toBe(1);
    expect(v.stats().cacheHits).toBe(10);
  });
});
