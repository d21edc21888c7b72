import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { AuthVerifyError } from "./errors.js";
import {
  claims,
  expectCode,
  frozenClock,
  type JwksServer,
  makeKey,
  mint,
  signRaw,
  startJwksServer,
  T0,
  T0_SEC,
  type TestKey,
} from "./test-fixtures.js";
import { createVerifier, extractBearerToken, type Verifier, type VerifierOptions } from "./verify.js";

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

function verifier(overrides: Partial<VerifierOptions> = {}, clock = frozenClock()): Verifier {
  const v = createVerifier({
    jwksUrl: server.url,
    issuer: "https://auth.test",
    audience: "api.test",
    now: clock.now,
    ...overrides,
  });
  open.push(v);
  return v;
}

describe("valid tokens", () => {
  it("verifies a Bearer header and returns the user id, claims and kid", async () => {
    const token = await mint(key);
    const result = await verifier().verify(`Bearer ${token}`);
    expect(result.userId).toBe("user-123");
    expect(result.kid).toBe("key-1");
    expect(result.claims).toMatchObject({ sub: "user-123", iss: "https://auth.test", aud: "api.test" });
    expect(Object.isFrozen(result.claims)).toBe(true);
  });

  it("verifies a bare token with verifyToken", async () => {
    const token = await mint(key, claims({ sub: "u-bare" }));
    expect((await verifier().verifyToken(token)).userId).toBe("u-bare");
  });

  it("accepts an audience array containing the expected audience and no iss/aud check when unset", async () => {
    const token = await mint(key, claims({ aud: ["other", "api.test"] }));
    expect((await verifier().verifyToken(token)).userId).toBe("user-123");
    const bare = await mint(key, { sub: "u", iat: T0_SEC, exp: T0_SEC + 60 });
    const v = verifier({ issuer: undefined, audience: undefined });
    expect((await v.verifyToken(bare)).userId).toBe("u");
  });

  it("accepts a token within the clock tolerance of exp and nbf", async () => {
    const clock = frozenClock();
    const v = verifier({ verifiedCache: false }, clock);
    const token = await mint(key, claims({ exp: T0_SEC + 10, nbf: T0_SEC + 4 }));
    await expect(v.verifyToken(token)).resolves.toMatchObject({ userId: "user-123" });
    clock.set(T0 + 14_000);
    await expect(v.verifyToken(token)).resolves.toMatchObject({ userId: "user-123" });
  });
});

describe("time and claims errors", () => {
  it("token_expired once exp + tolerance has passed (frozen clock)", async () => {
    const clock = frozenClock();
    const v = verifier({ verifiedCache: false }, clock);
    const token = await mint(key, claims({ exp: T0_SEC + 60 }));
    await v.verifyToken(token);
    clock.set(T0 + 65_000);
    await expectCode(v.verifyToken(token), "token_expired", token);
  });

  it("token_not_yet_valid when nbf is beyond the tolerance", async () => {
    const token = await mint(key, claims({ nbf: T0_SEC + 60 }));
    await expectCode(verifier().verifyToken(token), "token_not_yet_valid", token);
  });

  it("invalid_claims for a wrong issuer or audience", async () => {
    const wrongIss = await mint(key, claims({ iss: "https://evil.test" }));
    await expectCode(verifier().verifyToken(wrongIss), "invalid_claims", wrongIss);
    const wrongAud = await mint(key, claims({ aud: "other" }));
    await expectCode(verifier().verifyToken(wrongAud), "invalid_claims", wrongAud);
    const noAud = await mint(key, claims({ aud: undefined }));
    await expectCode(verifier().verifyToken(noAud), "invalid_claims", noAud);
  });

  it.each(["exp", "iat", "sub"])("invalid_claims when %s is missing", async (name) => {
    const payload: Record<string, unknown> = { ...claims() };
    delete payload[name];
    const token = await signRaw(key, { alg: "EdDSA", typ: "JWT", kid: key.kid }, payload);
    await expectCode(verifier().verifyToken(token), "invalid_claims", token);
  });

  it.each([
    ["empty sub", { sub: "" }],
    ["numeric sub", { sub: 42 }],
    ["string exp", { exp: "soon" }],
    ["string iat", { iat: "now" }],
  ])("invalid_claims for %s", async (_label, patch) => {
    const token = await signRaw(key, { alg: "EdDSA", typ: "JWT", kid: key.kid }, { ...claims(), ...patch });
    await expectCode(verifier().verifyToken(token), "invalid_claims", token);
  });
});

describe("Authorization header parsing", () => {
  it.each([
    ["undefined", undefined],
    ["null", null],
    ["empty string", ""],
    ["Bearer without credential", "Bearer "],
  ])("missing_token for %s", async (_label, header) => {
    await expectCode(verifier().verify(header), "missing_token");
  });

  it("accepts the Bearer scheme in any letter case (RFC 9110 §11.1, RFC 6750 §2.1)", async () => {
    const token = await mint(key);
    const v = verifier();
    for (const scheme of ["Bearer", "bearer", "BEARER", "BeArEr", "bEARER"]) {
      expect((await v.verify(`${scheme} ${token}`)).userId, scheme).toBe("user-123");
      expect(extractBearerToken(`${scheme} ${token}`)).toBe(token);
    }
    expect(v.stats().failures).toBe(0);
  });

  it("malformed_token for stray whitespace around any spelling of the scheme", async () => {
    const token = await mint(key);
    const v = verifier();
    for (const scheme of ["bearer", "BEARER", "BeArEr"]) {
      for (const header of [
        `${scheme}  ${token}`,
        `${scheme}\t${token}`,
        ` ${scheme} ${token}`,
        `${scheme} ${token} `,
        `${scheme} ${token}\n`,
        `${scheme}\u00a0${token}`,
        `${scheme} ${token.slice(0, 20)} ${token.slice(20)}`,
        `${scheme}${token}`,
      ]) {
        await expectCode(v.verify(header), "malformed_token", token);
      }
      await expectCode(v.verify(`${scheme} `), "missing_token");
    }
    // Look-alike letters are not the scheme: only ASCII letters fold.
    for (const lookalike of ["ｂearer", "Beаrer", "BEARER\u0307"]) {
      await expectCode(v.verify(`${lookalike} ${token}`), "malformed_token", token);
    }
  });

  it("malformed_token for doubled, other schemes and stray whitespace", async () => {
    const token = await mint(key);
    const v = verifier();
    for (const header of [
      `Bearer Bearer ${token}`,
      `Bearer  ${token}`,
      ` Bearer ${token}`,
      `Bearer ${token} `,
      `Bearer\t${token}`,
      `Basic ${token}`,
      token,
      "Bearer",
    ]) {
      await expectCode(v.verify(header), "malformed_token", token);
    }
    expect(v.stats().keySet.fetches).toBe(0);
    expect((await v.verify(`Bearer ${token}`)).userId).toBe("user-123");
  });

  it("extractBearerToken returns exactly the credential", () => {
    expect(extractBearerToken("Bearer a.b.c")).toBe("a.b.c");
    expect(extractBearerToken("bearer a.b.c")).toBe("a.b.c");
    expect(extractBearerToken("Bearer  a.b.c")).toBe(" a.b.c");
    expect(() => extractBearerToken("Bearer\ta.b.c")).toThrow(AuthVerifyError);
    expect(() => extractBearerToken("Bearera.b.c")).toThrow(AuthVerifyError);
  });

  it("missing_token for an empty bare token", async () => {
    await expectCode(verifier().verifyToken(""), "missing_token");
    await expectCode(verifier().verifyToken(undefined), "missing_token");
  });

  it("malformed_token for a 100 KB token, before any fetch", async () => {
    const v = verifier();
    const huge = `${"a".repeat(50_000)}.${"b".repeat(50_000)}.${"c".repeat(86)}`;
    await expectCode(v.verify(`Bearer ${huge}`), "malformed_token");
    await expectCode(v.verifyToken(huge), "malformed_token");
    expect(v.stats().keySet.fetches).toBe(0);
  });

  it("respects a custom maxTokenLength", async () => {
    const token = await mint(key);
    await expectCode(verifier({ maxTokenLength: token.length - 1 }).verifyToken(token), "malformed_token");
    await expect(verifier({ maxTokenLength: token.length }).verifyToken(token)).resolves.toBeDefined();
  });
});

describe("configuration", () => {
  it("requires jwksUrl or keySet and rejects bad numbers", () => {
    expect(() => createVerifier({})).toThrow(TypeError);
    expect(() => createVerifier({ jwksUrl: "ftp://x/jwks" })).toThrow(TypeError);
    expect(() => createVerifier({ jwksUrl: server.url, clockToleranceSec: -1 })).toThrow(TypeError);
    expect(() => createVerifier({ jwksUrl: server.url, maxTokenLength: 0 })).toThrow(TypeError);
    expect(() => createVerifier({ jwksUrl: server.url, verifiedCache: { maxEntries: -1 } })).toThrow(TypeError);
  });
});
