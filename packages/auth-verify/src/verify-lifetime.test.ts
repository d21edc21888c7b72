import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { claims, expectCode, type JwksServer, makeKey, mint, signRaw, startJwksServer, T0, T0_SEC, type TestKey } from "./test-fixtures.js";
import { buildHostileTokens } from "./testing/index.js";
import { createVerifier, DEFAULT_MAX_TOKEN_LIFETIME_SEC, type Verifier, type VerifierOptions } from "./verify.js";

// Only a key holder can sign these, but a leaked key must not mint an eternal token: a non-finite
// or far-off `exp`, an `iat` in the future, or a lifetime `exp - iat` beyond 30 days (+ tolerance)
// is refused. `token_expired` is kept for a token whose time has passed (its `iat` older than
// the longest lifetime too); every other case is `invalid_claims`: the token states something false
// about itself, and waiting would not make it acceptable.
const DAY = 86_400;
let key: TestKey;
let server: JwksServer;
const verifiers: Verifier[] = [];

beforeAll(async () => {
  key = await makeKey("key-1");
  server = await startJwksServer([key.publicJwk]);
});
afterAll(async () => {
  for (const v of verifiers) v.close();
  await server.close();
});

function verifier(options: Partial<VerifierOptions> = {}): Verifier {
  const v = createVerifier({ jwksUrl: server.url, issuer: "https://auth.test", audience: "api.test", now: () => T0, ...options });
  verifiers.push(v);
  return v;
}

/** A token whose payload is the default claims with `name` written as raw JSON text (e.g. 1e999). */
function rawClaim(name: string, json: string): Promise<string> {
  const text = JSON.stringify(claims()).replace(new RegExp(`"${name}":[0-9]+`), `"${name}":${json}`);
  return signRaw(key, { alg: "EdDSA", typ: "JWT", kid: key.kid }, text);
}

describe("token lifetime", () => {
  it("defaults to 30 days, identity's token lifetime", () => {
    expect(DEFAULT_MAX_TOKEN_LIFETIME_SEC).toBe(30 * DAY);
  });

  it("refuses exp 1e999 (Infinity after JSON.parse) and an absurdly far exp as invalid_claims", async () => {
    const v = verifier();
    for (const exp of ["1e999", "1e300", String(T0_SEC + 3650 * DAY)]) {
      const token = await rawClaim("exp", exp);
      await expectCode(v.verifyToken(token), "invalid_claims", token);
    }
  });

  it("refuses an iat in the future beyond the clock tolerance as invalid_claims, accepts it within", async () => {
    const v = verifier();
    const ahead = await mint(key, claims({ iat: T0_SEC + 6, exp: T0_SEC + 3600 }));
    await expectCode(v.verifyToken(ahead), "invalid_claims", ahead);
    const far = await rawClaim("iat", "1e999");
    await expectCode(v.verifyToken(far), "invalid_claims", far);
    const within = await mint(key, claims({ iat: T0_SEC + 5, exp: T0_SEC + 3600 }));
    expect((await v.verifyToken(within)).userId).toBe("user-123");
  });

  it("accepts a lifetime of 30 days plus the tolerance, refuses one second more", async () => {
    const v = verifier();
    const longest = await mint(key, claims({ iat: T0_SEC, exp: T0_SEC + 30 * DAY + 5 }));
    expect((await v.verifyToken(longest)).userId).toBe("user-123");
    const tooLong = await mint(key, claims({ iat: T0_SEC, exp: T0_SEC + 30 * DAY + 6 }));
    await expectCode(v.verifyToken(tooLong), "invalid_claims", tooLong);
  });

  it("honours maxTokenLifetimeSec, for the lifetime and the age of iat", async () => {
    const v = verifier({ maxTokenLifetimeSec: 3600, clockToleranceSec: 0 });
    const hour = await mint(key, claims({ iat: T0_SEC - 60, exp: T0_SEC + 3540 }));
    expect((await v.verifyToken(hour)).userId).toBe("user-123");
    const longer = await mint(key, claims({ iat: T0_SEC - 60, exp: T0_SEC + 3541 }));
    await expectCode(v.verifyToken(longer), "invalid_claims", longer);
    // Issued more than the longest lifetime ago: its time has passed whatever exp says.
    const old = await mint(key, claims({ iat: T0_SEC - 3601, exp: T0_SEC + 60 }));
    await expectCode(v.verifyToken(old), "token_expired", old);
  });

  it("rejects a bad maxTokenLifetimeSec", () => {
    for (const maxTokenLifetimeSec of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => verifier({ maxTokenLifetimeSec })).toThrow(TypeError);
    }
  });

  it("the hostile corpus holds 48 tokens; the last three are these and refused as invalid_claims", async () => {
    const corpus = await buildHostileTokens({ key, issuer: "https://auth.test", audience: "api.test", nowSec: T0_SEC });
    expect(corpus).toHaveLength(48);
    const v = verifier();
    for (const { name, token } of corpus.slice(45)) {
      expect(name).toMatch(/1e999|iat in the future|lifetime over 30 days/);
      await expectCode(v.verifyToken(token), "invalid_claims", token);
    }
  });
});
