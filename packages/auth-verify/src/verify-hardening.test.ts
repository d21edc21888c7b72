import { SignJWT } from "jose";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  b64url,
  claims,
  expectCode,
  frozenClock,
  type JwksServer,
  makeKey,
  mint,
  signRaw,
  startJwksServer,
  type TestKey,
} from "./test-fixtures.js";
import { createVerifier, type Verifier } from "./verify.js";

let key: TestKey;
let attacker: TestKey;
let server: JwksServer;
const open: Verifier[] = [];

beforeAll(async () => {
  key = await makeKey("key-1");
  attacker = await makeKey("key-1"); // same kid as the real key, different key material
  server = await startJwksServer([key.publicJwk]);
});
afterAll(() => server.close());
afterEach(() => {
  for (const v of open.splice(0)) v.close();
});

function verifier(): Verifier {
  const v = createVerifier({ jwksUrl: server.url, issuer: "https://auth.test", audience: "api.test", now: frozenClock().now });
  open.push(v);
  return v;
}

/** Replaces the signature of `token` with 86 characters of junk of the right shape. */
function fakeSignature(headerAndPayload: string): string {
  return `${headerAndPayload}.${"A".repeat(86)}`;
}

describe("signature and key errors", () => {
  it("invalid_signature for a tampered payload", async () => {
    const token = await mint(key);
    const [h, , s] = token.split(".");
    const forged = `${h}.${b64url(JSON.stringify(claims({ sub: "admin" })))}.${s}`;
    await expectCode(verifier().verifyToken(forged), "invalid_signature", forged);
  });

  it("invalid_signature for a truncated or non-canonical signature", async () => {
    const token = await mint(key);
    const v = verifier();
    await expectCode(v.verifyToken(token.slice(0, -2)), "invalid_signature");
    await expectCode(v.verifyToken(token.slice(0, -1)), "invalid_signature");
    // The last character carries 2 signature bits; its 4 padding bits must be zero.
    const twin = `${token.slice(0, -1)}${String.fromCharCode(token.charCodeAt(token.length - 1) + 1)}`;
    await expectCode(v.verifyToken(twin), "invalid_signature");
    expect((await v.verifyToken(token)).userId).toBe("user-123");
  });

  it("invalid_signature for a foreign key reusing a real kid", async () => {
    const token = await mint(attacker);
    await expectCode(verifier().verifyToken(token), "invalid_signature", token);
  });

  it("unknown_key for a kid that is not in the set", async () => {
    const stranger = await makeKey("key-unknown");
    const token = await mint(stranger);
    await expectCode(verifier().verifyToken(token), "unknown_key", token);
  });

  it("unknown_key for a missing kid; malformed_token for a non-string or empty kid", async () => {
    const v = verifier();
    const noKid = await signRaw(key, { alg: "EdDSA" }, claims());
    await expectCode(v.verifyToken(noKid), "unknown_key", noKid);
    for (const kid of [1, "", ["key-1"], { id: "key-1" }, null]) {
      const token = await signRaw(key, { alg: "EdDSA", kid }, claims());
      await expectCode(v.verifyToken(token), "malformed_token", token);
    }
  });
});

describe("algorithm pinning", () => {
  it("refuses alg none, with or without a signature, without fetching keys", async () => {
    const v = verifier();
    const unsigned = `${b64url(JSON.stringify({ alg: "none", kid: "key-1" }))}.${b64url(JSON.stringify(claims()))}`;
    await expectCode(v.verifyToken(`${unsigned}.`), "malformed_token");
    await expectCode(v.verifyToken(fakeSignature(unsigned)), "invalid_signature");
    expect(v.stats().keySet.fetches).toBe(0);
  });

  it("refuses HS256 signed with the public key bytes (algorithm confusion)", async () => {
    const v = verifier();
    const publicX = Buffer.from(String(key.publicJwk.x), "base64url");
    const publicJson = new TextEncoder().encode(JSON.stringify(key.publicJwk));
    for (const secret of [publicX, publicJson]) {
      const token = await new SignJWT(claims()).setProtectedHeader({ alg: "HS256", kid: "key-1" }).sign(secret);
      await expectCode(v.verifyToken(token), "invalid_signature", token);
      await expectCode(v.verifyToken(fakeSignature(token.split(".").slice(0, 2).join("."))), "invalid_signature");
    }
    expect(v.stats().keySet.fetches).toBe(0);
  });

  it.each(["ES256", "RS256", "Ed25519", "EdDSA2", "eddsa"])("refuses alg %s", async (alg) => {
    const unsigned = `${b64url(JSON.stringify({ alg, kid: "key-1" }))}.${b64url(JSON.stringify(claims()))}`;
    await expectCode(verifier().verifyToken(fakeSignature(unsigned)), "invalid_signature");
  });
});

describe("header parameters that must never be trusted", () => {
  it.each(["jwk", "jku", "x5u", "x5c", "x5t"])("malformed_token when the header carries %s", async (name) => {
    const values: Record<string, unknown> = {
      jwk: attacker.publicJwk,
      jku: "https://evil.test/jwks",
      x5u: "https://evil.test/cert.pem",
      x5c: ["MIIB"],
      x5t: "abc",
    };
    const v = verifier();
    // Signed by the attacker key that the header points at, and by the real key: both refused.
    for (const signer of [attacker, key]) {
      const token = await signRaw(signer, { alg: "EdDSA", kid: "key-1", [name]: values[name] }, claims());
      await expectCode(v.verifyToken(token), "malformed_token", token);
    }
  });

  it("malformed_token for an unknown crit extension (signed by the real key)", async () => {
    const token = await signRaw(key, { alg: "EdDSA", kid: "key-1", crit: ["exp2"], exp2: 1 }, claims());
    await expectCode(verifier().verifyToken(token), "malformed_token", token);
    const empty = await signRaw(key, { alg: "EdDSA", kid: "key-1", crit: [] }, claims());
    await expectCode(verifier().verifyToken(empty), "malformed_token", empty);
  });

  it("malformed_token for b64:false (unencoded payload), with or without crit", async () => {
    const payload = JSON.stringify(claims());
    const h = b64url(JSON.stringify({ alg: "EdDSA", kid: "key-1", b64: false, crit: ["b64"] }));
    const sig = new Uint8Array(await crypto.subtle.sign("Ed25519", key.privateKey, new TextEncoder().encode(`${h}.${payload}`)));
    await expectCode(verifier().verifyToken(`${h}.${payload}.${b64url(sig)}`), "malformed_token");
    const withoutCrit = await signRaw(key, { alg: "EdDSA", kid: "key-1", b64: false }, claims());
    await expectCode(verifier().verifyToken(withoutCrit), "malformed_token", withoutCrit);
    const b64True = await signRaw(key, { alg: "EdDSA", kid: "key-1", b64: true, crit: ["b64"] }, claims());
    await expectCode(verifier().verifyToken(b64True), "malformed_token", b64True);
  });
});

describe("structure", () => {
  it("malformed_token for 1, 2, 4 and 5 segments and empty segments", async () => {
    const token = await mint(key);
    const [h, p, s] = token.split(".") as [string, string, string];
    const v = verifier();
    for (const bad of [h, `${h}.${p}`, `${token}.${s}`, `${token}.${s}.${s}`, `.${p}.${s}`, `${h}..${s}`, `${h}.${p}.`]) {
      await expectCode(v.verifyToken(bad), "malformed_token", token);
    }
    expect(v.stats().keySet.fetches).toBe(0);
  });

  it("malformed_token for characters outside base64url", async () => {
    const token = await mint(key);
    const [h, p, s] = token.split(".") as [string, string, string];
    const v = verifier();
    for (const bad of [`${h}.${p}+.${s}`, `${h}=.${p}.${s}`, `${h}.${p}/x.${s}`, `${h}.${p}%20.${s}`, `${h}.${p}.${s.slice(0, -1)}=`]) {
      await expectCode(v.verifyToken(bad), "malformed_token");
    }
    await expectCode(v.verifyToken(`${h}.${p}.${s}\n`), "malformed_token");
    await expectCode(v.verifyToken(`${h}.${p}é.${s}`), "malformed_token");
  });

  it("malformed_token for a header that is not JSON, not an object, or invalid UTF-8", async () => {
    const v = verifier();
    for (const header of [
      new TextEncoder().encode("not json"),
      new TextEncoder().encode("[1]"),
      new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]),
    ]) {
      const token = await signRaw(key, header, claims());
      await expectCode(v.verifyToken(token), "malformed_token", token);
    }
  });

  it("malformed_token for a correctly signed payload that is not a JSON object or not UTF-8", async () => {
    const v = verifier();
    const head = { alg: "EdDSA", kid: "key-1" };
    const quote = (value: string) => JSON.stringify(value);
    for (const payload of ["[1,2]", "42", "null", quote("sub"), "not json", new Uint8Array([0x7b, 0x22, 0xff, 0x22, 0x7d])]) {
      const token = await signRaw(key, head, payload);
      await expectCode(v.verifyToken(token), "malformed_token", token);
    }
  });
});
