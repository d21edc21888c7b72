import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AuthVerifyError } from "./errors.js";
import { b64url, claims, type JwksServer, makeKey, mint, signRaw, startJwksServer, T0_SEC, type TestKey } from "./test-fixtures.js";
import { createVerifier, type Verifier } from "./verify.js";

// Property-based fuzzing of the primitive: whatever the input, verify() either refuses with a
// 401 AuthVerifyError or (only for the untouched valid token) accepts; it never throws anything
// else, never answers 503 while the key set is up, and never hangs.
const RUNS = 10_000;
let key: TestKey;
let server: JwksServer;
let v: Verifier;
let valid: string;

beforeAll(async () => {
  key = await makeKey("key-1");
  server = await startJwksServer([key.publicJwk]);
  v = createVerifier({ jwksUrl: server.url, issuer: "https://auth.test", audience: "api.test", now: () => T0_SEC * 1000 });
  valid = await mint(key);
  await v.verifyToken(valid);
});
afterAll(async () => {
  v.close();
  await server.close();
});

const B64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
const b64Char = fc.constantFrom(...B64URL.split(""));
const anyChar = fc.oneof(b64Char, fc.constantFrom(".", "=", "+", "/", " ", "\t", "\n", "%", "é", "\u0000", "\ud800"));

/** A valid token with characters replaced, inserted or removed at random places. */
const mutated = fc
  .array(fc.tuple(fc.nat(), anyChar, fc.constantFrom("replace", "insert", "delete")), { minLength: 1, maxLength: 4 })
  .map((edits) => {
    let t = valid;
    for (const [at, ch, op] of edits) {
      const i = at % (t.length + 1);
      if (op === "replace") t = `${t.slice(0, i)}${ch}${t.slice(i + 1)}`;
      else if (op === "insert") t = `${t.slice(0, i)}${ch}${t.slice(i)}`;
      else t = `${t.slice(0, i)}${t.slice(i + 1)}`;
    }
    return t;
  })
  .filter((t) => t !== valid);

/** Three segments of arbitrary JSON (or bytes) with a random signature of the right shape. */
const structured = fc
  .tuple(
    fc.oneof(
      fc.jsonValue(),
      fc.record({ alg: fc.constantFrom("EdDSA", "none", "HS256", "RS256"), kid: fc.oneof(fc.constant("key-1"), fc.jsonValue()) }),
    ),
    fc.oneof(fc.jsonValue(), fc.uint8Array({ maxLength: 64 })),
    fc.uint8Array({ minLength: 64, maxLength: 64 }),
  )
  .map(
    ([h, p, sig]) =>
      `${b64url(JSON.stringify(h) ?? "null")}.${p instanceof Uint8Array ? b64url(p) : b64url(JSON.stringify(p) ?? "null")}.${b64url(sig)}`,
  );

/** Arbitrary header and payload objects correctly signed by the real key: only claim checks refuse them. */
const signedClaims = fc
  .record(
    {
      sub: fc.oneof(fc.string(), fc.integer(), fc.constant(undefined)),
      exp: fc.oneof(fc.integer({ min: T0_SEC - 100_000, max: T0_SEC + 100_000 }), fc.string(), fc.constant(undefined)),
      iat: fc.oneof(fc.integer(), fc.constant(undefined)),
      nbf: fc.oneof(fc.integer({ min: T0_SEC - 10, max: T0_SEC + 100_000 }), fc.constant(undefined)),
      iss: fc.oneof(fc.constant("https://auth.test"), fc.string()),
      aud: fc.oneof(fc.constant("api.test"), fc.string(), fc.array(fc.string())),
    },
    { requiredKeys: [] },
  )
  .map((over): Record<string, unknown> => ({ ...claims(), ...over }))
  .filter((c) => {
    const valid =
      typeof c.sub === "string" &&
      c.sub !== "" &&
      typeof c.exp === "number" &&
      c.exp + 5 > T0_SEC &&
      typeof c.iat === "number" &&
      (c.nbf === undefined || (typeof c.nbf === "number" && c.nbf <= T0_SEC + 5)) &&
      c.iss === "https://auth.test" &&
      (c.aud === "api.test" || (Array.isArray(c.aud) && c.aud.includes("api.test")));
    return !valid;
  });

const header = fc.oneof(
  fc.string({ unit: "binary", maxLength: 300 }),
  fc.string({ unit: "grapheme", maxLength: 300 }),
  mutated.map((t) => `Bearer ${t}`),
  structured.map((t) => `Bearer ${t}`),
  fc
    .tuple(fc.constantFrom("Bearer ", "bearer ", "Bearer  ", "Basic ", "", "Bearer\t"), fc.string({ maxLength: 200 }))
    .map(([s, t]) => `${s}${t}`),
);

describe("fuzzing the primitive (fast-check)", () => {
  it(`refuses ${RUNS} generated Authorization values with a 401 and nothing else`, async () => {
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(header, async (value) => {
        runs += 1;
        const outcome = await v.verify(value).then(
          () => "accepted",
          (e: unknown) => e,
        );
        expect(outcome).toBeInstanceOf(AuthVerifyError);
        expect((outcome as AuthVerifyError).status).toBe(401);
      }),
      { numRuns: RUNS },
    );
    expect(runs).toBeGreaterThanOrEqual(RUNS);
    expect((await v.verify(`Bearer ${valid}`)).userId).toBe("user-123");
  });

  it("refuses correctly signed tokens with arbitrary claims unless every claim is valid", async () => {
    await fc.assert(
      fc.asyncProperty(signedClaims, async (payload) => {
        const token = await signRaw(key, { alg: "EdDSA", kid: "key-1" }, payload);
        const outcome = await v.verifyToken(token).then(
          () => "accepted",
          (e: unknown) => e,
        );
        expect(outcome).toBeInstanceOf(AuthVerifyError);
        expect((outcome as AuthVerifyError).status).toBe(401);
      }),
      { numRuns: 1_000 },
    );
  });
});
