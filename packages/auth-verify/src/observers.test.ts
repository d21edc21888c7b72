import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { claims, expectCode, frozenClock, type JwksServer, makeKey, mint, startJwksServer, T0_SEC, type TestKey } from "./test-fixtures.js";
import { createVerifier, type VerificationOutcome, type Verifier, type VerifierOptions } from "./verify.js";

// The observers the API's metrics hang on (apps/api/src/metrics.ts): every verification reports
// its outcome once, synchronous or not, and every key set fetch reports whether it succeeded.
// Real HTTP on 127.0.0.1 for the key set.

let key: TestKey;
let other: TestKey;
let server: JwksServer;
const open: Verifier[] = [];

beforeAll(async () => {
  key = await makeKey("key-1");
  other = await makeKey("key-other");
  server = await startJwksServer([key.publicJwk]);
});
afterAll(() => server.close());
afterEach(() => {
  server.setMode("ok");
  for (const v of open.splice(0)) v.close();
});

function observed(overrides: Partial<VerifierOptions> = {}) {
  const outcomes: VerificationOutcome[] = [];
  const fetches: boolean[] = [];
  const clock = frozenClock();
  const verifier = createVerifier({
    jwksUrl: server.url,
    issuer: "https://auth.test",
    audience: "api.test",
    now: clock.now,
    cooldownMs: 0,
    onOutcome: (outcome) => outcomes.push(outcome),
    onFetchOutcome: (ok) => fetches.push(ok),
    ...overrides,
  });
  open.push(verifier);
  return { verifier, outcomes, fetches, clock };
}

describe("verifier observers", () => {
  it("reports each verification once: ok for fresh and cached tokens, the code for each refusal", async () => {
    const { verifier, outcomes } = observed();
    const token = await mint(key);
    await verifier.verify(`Bearer ${token}`); // jose
    await verifier.verify(`Bearer ${token}`); // second sighting: admitted
    expect(verifier.verifyNow(`Bearer ${token}`)).toMatchObject({ userId: "user-123" }); // cache hit, synchronous
    await expectCode(verifier.verify(undefined), "missing_token");
    await expectCode(verifier.verify("Basic abc"), "malformed_token");
    await expectCode(verifier.verifyToken("a.b"), "malformed_token");
    await expectCode(verifier.verify(`Bearer ${await mint(other)}`), "unknown_key");
    await expectCode(verifier.verify(`Bearer ${await mint(key, claims({ iat: T0_SEC - 3600, exp: T0_SEC - 60 }))}`), "token_expired");
    await expectCode(verifier.verify(`Bearer ${await mint(key, claims({ aud: "elsewhere" }))}`), "invalid_claims");
    expect(outcomes).toEqual([
      "ok",
      "ok",
      "ok",
      "missing_token",
      "malformed_token",
      "malformed_token",
      "unknown_key",
      "token_expired",
      "invalid_claims",
    ]);
    expect(outcomes).toHaveLength(verifier.stats().verifications);
  });

  it("reports each key set fetch: true when a set was installed, false when it failed", async () => {
    const { verifier, outcomes, fetches } = observed();
    server.setMode("error500");
    await expectCode(verifier.verify(`Bearer ${await mint(key)}`), "jwks_unavailable");
    expect(fetches).toEqual([false]);
    server.setMode("ok");
    await verifier.keySet.refreshNow();
    expect(fetches).toEqual([false, true]);
    server.setMode("not-json");
    await expect(verifier.keySet.refreshNow()).rejects.toMatchObject({ code: "jwks_unavailable" });
    expect(fetches).toEqual([false, true, false]);
    expect(outcomes).toEqual(["jwks_unavailable"]);
  });

  it("keeps answering when an observer throws", async () => {
    const { verifier } = observed({
      onOutcome: () => {
        throw new Error("observer broke");
      },
      onFetchOutcome: () => {
        throw new Error("observer broke");
      },
    });
    const token = await mint(key);
    expect((await verifier.verify(`Bearer ${token}`)).userId).toBe("user-123");
    await expectCode(verifier.verify(undefined), "missing_token");
  });
});
