import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AuthVerifyError } from "./errors.js";
import { claims, type JwksServer, makeKey, mint, startJwksServer, T0_SEC, type TestKey } from "./test-fixtures.js";
import { buildHostileTokens, type HostileToken, hostileAuthorizationCases } from "./testing/index.js";
import { createVerifier, type Verifier } from "./verify.js";

// The shared corpus (also run over HTTP and the WebSocket upgrade by apps/api): every token is
// refused by the primitive with a 401 code, never accepted, never a 503 and never a crash.
let key: TestKey;
let server: JwksServer;
let corpus: HostileToken[];
let v: Verifier;

beforeAll(async () => {
  key = await makeKey("key-1");
  server = await startJwksServer([key.publicJwk]);
  corpus = await buildHostileTokens({ key, issuer: "https://auth.test", audience: "api.test", nowSec: T0_SEC });
  v = createVerifier({ jwksUrl: server.url, issuer: "https://auth.test", audience: "api.test", now: () => T0_SEC * 1000 });
});
afterAll(async () => {
  v.close();
  await server.close();
});

async function refusal(run: () => Promise<unknown>): Promise<AuthVerifyError> {
  const error = await run().then(
    () => new Error("accepted"),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AuthVerifyError);
  return error as AuthVerifyError;
}

describe("the hostile-token corpus against the primitive", () => {
  it("holds at least 30 distinct tokens", () => {
    expect(corpus.length).toBeGreaterThanOrEqual(30);
    expect(new Set(corpus.map((c) => c.token)).size).toBe(corpus.length);
    expect(corpus.find((c) => c.name === "100 KB token")?.token.length).toBeGreaterThanOrEqual(100_000);
  });

  it("a valid token of the same key and claims verifies (the corpus is not refused for a trivial reason)", async () => {
    expect((await v.verify(`Bearer ${await mint(key, claims({ iat: T0_SEC, exp: T0_SEC + 3600 }))}`)).userId).toBe("user-123");
  });

  it("refuses every token with a 401 code, as a header and as a bare token", async () => {
    const codes: Record<string, string> = {};
    for (const { name, token } of corpus) {
      const viaHeader = await refusal(() => v.verify(`Bearer ${token}`));
      const bare = await refusal(() => v.verifyToken(token));
      // verifyNow refuses the same way, thrown or (unknown kid: the set is asked) rejected.
      const now = await refusal(async () => v.verifyNow(`Bearer ${token}`));
      expect(viaHeader.status, name).toBe(401);
      expect(bare.code, name).toBe(viaHeader.code);
      expect(now.code, name).toBe(viaHeader.code);
      for (const part of token.split(".")) if (part.length > 8) expect(viaHeader.message).not.toContain(part);
      codes[name] = viaHeader.code;
    }
    expect(codes["alg none, empty signature"]).toBe("malformed_token");
    expect(codes["HS256 signed with the public key bytes (algorithm confusion)"]).toBe("invalid_signature");
    expect(codes["foreign key reusing the real kid"]).toBe("invalid_signature");
    expect(codes.expired).toBe("token_expired");
    expect(codes["nbf in the future"]).toBe("token_not_yet_valid");
    expect(codes["unknown kid"]).toBe("unknown_key");
    expect(codes["jku header"]).toBe("malformed_token");
    expect(v.stats().cacheHits).toBe(0);
  });

  it("refuses every malformed Authorization value it can see (one header value)", async () => {
    const token = await mint(key, claims({ iat: T0_SEC, exp: T0_SEC + 3600 }));
    for (const c of hostileAuthorizationCases(token)) {
      if (c.headers.length !== 1) continue; // two headers are an HTTP matter (apps/api)
      const error = await refusal(() => v.verify(c.headers[0]?.[1]));
      expect(error.status, c.name).toBe(401);
      expect((await refusal(async () => v.verifyNow(c.headers[0]?.[1]))).code, c.name).toBe(error.code);
    }
  });
});
