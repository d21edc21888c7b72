import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { AuthVerifyError } from "./errors.js";
import { RemoteKeySet } from "./remote-key-set.js";
import {
  claims,
  expectCode,
  frozenClock,
  type JwksServer,
  makeKey,
  mint,
  signRaw,
  startJwksServer,
  T0_SEC,
  type TestKey,
} from "./test-fixtures.js";
import { buildHostileTokens } from "./testing/index.js";
import { createVerifier, type Verifier, type VerifierOptions } from "./verify.js";

let key: TestKey;
let server: JwksServer;
const open: Verifier[] = [];

beforeAll(async () => {
  key = await makeKey("key-1");
  server = await startJwksServer([key.publicJwk]);
});
afterAll(() => server.close());
afterEach(() => {
  for (const v of open.splice(0)) v.close();
});

function verifier(overrides: Partial<VerifierOptions> = {}): Verifier {
  const v = createVerifier({
    jwksUrl: server.url,
    issuer: "https://auth.test",
    audience: "api.test",
    now: frozenClock().now,
    ...overrides,
  });
  open.push(v);
  return v;
}

/** An OAuth access token (RFC 9068) with the same claims as a contract token. */
const accessToken = (typ = "at+jwt") => mint(key, claims({ client_id: "client-1", scope: "mcp:read" }), { typ });

describe("the accepted typ header", () => {
  it("is the contract's JWT by default: an access token (at+jwt) is refused even with the right iss and aud", async () => {
    const v = verifier();
    for (const typ of ["at+jwt", "application/at+jwt", "AT+JWT"]) await expectCode(v.verifyToken(await accessToken(typ)), "invalid_claims");
    await expect(v.verifyToken(await mint(key))).resolves.toMatchObject({ userId: "user-123" });
  });

  it("is the option's when given: at+jwt in any letter case, with or without application/, and nothing else", async () => {
    const v = verifier({ tokenType: "at+jwt" });
    for (const typ of ["at+jwt", "application/at+jwt", "At+JWT"]) {
      await expect(v.verifyToken(await accessToken(typ))).resolves.toMatchObject({ userId: "user-123" });
    }
    await expectCode(v.verifyToken(await mint(key)), "invalid_claims");
    await expectCode(v.verifyToken(await signRaw(key, { alg: "EdDSA", kid: key.kid }, claims())), "invalid_claims");
  });

  it("keeps two verifiers on one key set apart: a token cached by one is still refused by the other", async () => {
    const keySet = new RemoteKeySet({ url: server.url, now: frozenClock().now });
    const contract = verifier({ keySet });
    const resource = verifier({ keySet, tokenType: "at+jwt" });
    const token = await accessToken();
    for (let i = 0; i < 3; i++) await resource.verifyToken(token);
    expect(resource.stats().cacheHits).toBeGreaterThan(0);
    await expectCode(contract.verifyToken(token), "invalid_claims");
    keySet.close();
  });

  it("refuses the whole hostile corpus built for an access token resource, the contract's typ among it", async () => {
    const v = verifier({ tokenType: "at+jwt" });
    const options = { key, issuer: "https://auth.test", audience: "api.test", nowSec: T0_SEC, typ: "at+jwt", claims: { client_id: "c" } };
    const corpus = await buildHostileTokens(options);
    expect(corpus.map((c) => c.name)).toContain("typ JWT (the other kind of token, same key and claims)");
    for (const { name, token } of corpus) await expect(v.verifyToken(token), name).rejects.toBeInstanceOf(AuthVerifyError);
    await expect(v.verifyToken(await accessToken())).resolves.toBeDefined();
  });

  it("must be a non-empty printable token", () => {
    for (const tokenType of ["", " at+jwt", "at+jwt\n", "x".repeat(65)]) {
      expect(() => createVerifier({ jwksUrl: server.url, tokenType })).toThrow(TypeError);
    }
  });
});
