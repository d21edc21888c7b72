import { createPublicKey, type KeyObject } from "node:crypto";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AuthVerifyError } from "./errors.js";
import { type ClaimRules, oracleVerify } from "./oracle.test-support.js";
import { b64url, claims, type JwksServer, makeKey, signRaw, startJwksServer, T0, T0_SEC, type TestKey } from "./test-fixtures.js";
import { buildHostileTokens } from "./testing/index.js";
import { createVerifier, DEFAULT_MAX_TOKEN_LIFETIME_SEC, type Verifier } from "./verify.js";

// Differential test of the verifier (jose `jwtVerify`, jwt-check.ts) against an independent
// hand-written verifier on node:crypto (oracle.test-support.ts) applying the same rules in the same
// order. For every input both must answer the same outcome: the same error code and message, or
// the same claims.
const ISSUER = "https://auth.test";
const AUDIENCE = "api.test";
const RULES: ClaimRules = { issuers: [ISSUER], audiences: [AUDIENCE], toleranceSec: 5, maxLifetimeSec: DEFAULT_MAX_TOKEN_LIFETIME_SEC };

let key: TestKey;
let foreign: TestKey;
let server: JwksServer;
let v: Verifier;
let oracleKey: KeyObject;

beforeAll(async () => {
  key = await makeKey("key-1");
  foreign = await makeKey("key-1");
  server = await startJwksServer([key.publicJwk]);
  v = createVerifier({ jwksUrl: server.url, issuer: ISSUER, audience: AUDIENCE, now: () => T0, verifiedCache: false });
  oracleKey = createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: String(key.publicJwk.x) }, format: "jwk" });
});
afterAll(async () => {
  v.close();
  await server.close();
});

/** The oracle's answer for a token, as a promise like the verifier's. */
async function oracle(token: string): Promise<unknown> {
  return oracleVerify(token, (kid) => (kid === key.kid ? oracleKey : undefined), RULES, T0).claims;
}

/** An outcome both implementations can be compared on. */
async function outcome(run: () => Promise<unknown>): Promise<unknown> {
  try {
    const value = await run();
    return { accepted: value };
  } catch (error) {
    if (!(error instanceof AuthVerifyError)) return { crashed: String(error) };
    return { code: error.code, message: error.message };
  }
}

async function expectSame(token: string): Promise<void> {
  const expected = await outcome(() => oracle(token));
  const actual = await outcome(async () => (await v.verifyToken(token)).claims);
  expect(actual, token.slice(0, 200)).toEqual(expected);
}

const anyJson = fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.constant(undefined));
/** Edits of named members: a value, or undefined to delete the member. */
function edited(base: Record<string, unknown>, edits: Array<[string, unknown]>): Record<string, unknown> {
  const out = { ...base };
  for (const [name, value] of edits) {
    if (value === undefined) delete out[name];
    else out[name] = value;
  }
  return out;
}

const headerEdit = fc.oneof(
  fc.tuple(fc.constant("alg"), fc.oneof(fc.constantFrom("EdDSA", "none", "HS256", "RS256", "", "eddsa"), anyJson)),
  fc.tuple(fc.constant("kid"), fc.oneof(fc.constantFrom("key-1", "key-2", ""), anyJson)),
  fc.tuple(fc.constant("typ"), fc.constantFrom("JWT", "at+jwt", 1)),
  fc.tuple(fc.constant("crit"), fc.oneof(fc.constantFrom([], ["b64"], ["exp2"], ["b64", "b64"], [""], [1], "b64", null), anyJson)),
  fc.tuple(fc.constant("b64"), fc.oneof(fc.constantFrom(true, false, "false", null), anyJson)),
  fc.tuple(fc.constantFrom("jku", "x5t", "jwk", "x5c", "x5t#S256"), fc.constantFrom("https://evil.test/jwks", ["MIIB"])),
  fc.tuple(fc.string({ maxLength: 6 }), anyJson),
);
/** Mostly a valid header with a few members changed or deleted. */
const headerArb = fc.array(headerEdit, { maxLength: 3 }).map((edits) => edited({ alg: "EdDSA", kid: "key-1", typ: "JWT" }, edits));
const timeArb = fc.oneof(
  fc.integer({ min: T0_SEC - 200, max: T0_SEC + 200 }),
  fc.double({ min: T0_SEC - 10, max: T0_SEC + 10, noNaN: true }),
  fc.constantFrom("soon", null, true, 1e300, -1e300),
  // Around the longest lifetime (30 days) and age, in both directions.
  fc.constantFrom(T0_SEC + 30 * 86_400 + 6, T0_SEC + 31 * 86_400, T0_SEC - 30 * 86_400 - 6, T0_SEC - 30 * 86_400 + 4, T0_SEC + 6),
  fc.constant(undefined),
);
const claimEdit = fc.oneof(
  fc.tuple(fc.constant("sub"), fc.oneof(fc.constantFrom("user-123", "", 42, null), anyJson)),
  fc.tuple(fc.constant("iss"), fc.oneof(fc.constantFrom(ISSUER, "https://evil.test", 1), anyJson)),
  fc.tuple(fc.constant("aud"), fc.oneof(fc.constantFrom(AUDIENCE, [AUDIENCE], ["x", AUDIENCE], ["x"], [], [1, AUDIENCE], 7), anyJson)),
  fc.tuple(fc.constantFrom("iat", "nbf", "exp"), timeArb),
  fc.tuple(fc.constantFrom("profile", "jti", "email"), anyJson),
);
/** Mostly valid claims with a few changed or deleted, sometimes not an object at all. */
const payloadArb = fc.oneof(
  { weight: 8, arbitrary: fc.array(claimEdit, { maxLength: 3 }).map((edits) => edited(claims(), edits)) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 1 }).map((value) => JSON.stringify(value) ?? "null") },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 24 }) },
);

describe("the jose verifier against the hand-written oracle", () => {
  it("gives the same outcome for every token of the hostile corpus", async () => {
    for (const { token } of await buildHostileTokens({ key, issuer: ISSUER, audience: AUDIENCE, nowSec: T0_SEC })) {
      if (token.length <= 8192) await expectSame(token);
    }
  });

  it("gives the same outcome for correctly signed tokens with arbitrary headers and claims", async () => {
    await fc.assert(
      fc.asyncProperty(headerArb, payloadArb, async (header, payload) => {
        await expectSame(await signRaw(key, header, payload));
      }),
      { numRuns: 3_000 },
    );
  });

  it("gives the same outcome for foreign signatures, bent signatures and odd segment lengths", async () => {
    await fc.assert(
      fc.asyncProperty(
        headerArb,
        payloadArb,
        fc.constantFrom("foreign", "flip", "pad-header", "pad-payload"),
        async (header, payload, twist) => {
          const token = await signRaw(twist === "foreign" ? foreign : key, header, payload);
          const [h = "", p = "", s = ""] = token.split(".");
          const bent =
            twist === "flip"
              ? `${h}.${p}.${s[0] === "A" ? "B" : "A"}${s.slice(1)}`
              : twist === "pad-header"
                ? `${h}A.${p}.${s}`
                : twist === "pad-payload"
                  ? `${h}.${p}A.${s}`
                  : token;
          await expectSame(bent);
        },
      ),
      { numRuns: 1_000 },
    );
  });

  it("gives the same outcome with a BOM before the JSON and for header bytes that are not UTF-8", async () => {
    const bom = new Uint8Array([0xef, 0xbb, 0xbf]);
    const json = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));
    const withBom = (bytes: Uint8Array) => new Uint8Array([...bom, ...bytes]);
    const header = { alg: "EdDSA", kid: "key-1" };
    await expectSame(await signRaw(key, withBom(json(header)), claims()));
    await expectSame(await signRaw(key, header, withBom(json(claims()))));
    await expectSame(await signRaw(key, new Uint8Array([0xc3, 0x28]), claims()));
    await expectSame(`${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(claims()))}.${"A".repeat(86)}`);
  });

  it("gives the same outcome for non-finite times (JSON 1e999 is Infinity)", async () => {
    const header = { alg: "EdDSA", kid: "key-1", typ: "JWT" };
    const base = JSON.stringify(claims());
    for (const [name, value] of [
      ["exp", "1e999"],
      ["exp", "-1e999"],
      ["iat", "1e999"],
      ["iat", "-1e999"],
      ["nbf", "-1e999"],
    ] as const) {
      const payload = base.includes(`"${name}":`)
        ? base.replace(new RegExp(`"${name}":[0-9]+`), `"${name}":${value}`)
        : base.replace("{", `{"${name}":${value},`);
      await expectSame(await signRaw(key, header, payload));
    }
  });
});
