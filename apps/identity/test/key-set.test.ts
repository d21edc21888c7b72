import { JWT_LIFETIME_SECONDS, SET_AUTH_JWT_HEADER } from "@app/contracts";
import { createTestDatabase, type TestDatabase } from "@app/db/testing";
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from "jose";
import request from "supertest";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { DEFAULT_KEY_ACTIVATION_DELAY_MS, ROTATION_SKEW_MS } from "../src/services/key-set.js";
import { frozenClock, identityKit, type Kit, signUp } from "./kit.js";

let database: TestDatabase;
const open: Kit[] = [];

beforeEach(async () => {
  database = await createTestDatabase();
});
afterEach(async () => {
  await Promise.all(open.splice(0).map((k) => k.close()));
  await database.drop();
});

async function kit(env: Record<string, string> = {}, now?: () => number) {
  const k = await identityKit({ database, env, ...(now ? { now } : {}) });
  open.push(k);
  return k;
}

async function tokenFor(k: Kit, cookie: string) {
  const res = await request(k.app).post("/api/auth/get-session").set("cookie", cookie).expect(200);
  return res.headers[SET_AUTH_JWT_HEADER] as string;
}

describe("AUTH_SECRET changed", () => {
  it("retires keys that no longer decrypt, makes a fresh one, and keeps get-session working", async () => {
    const before = await kit({ AUTH_SECRET: "first-secret-first-secret-first-secret-1" });
    const { cookie } = await signUp(before.app);
    const oldToken = await tokenFor(before, cookie);
    const oldKid = decodeProtectedHeader(oldToken).kid;

    const after = await kit({ AUTH_SECRET: "second-secret-second-secret-second-secr" });
    const jwks = (await request(after.app).get("/api/auth/jwks").expect(200)).body;
    expect(jwks.keys.map((k: { kid: string }) => k.kid)).not.toContain(oldKid);
    expect(jwks.keys).toHaveLength(1);

    // The old session ended with the secret (sessions.ts); a new sign-in gets a JWT of the new key.
    await request(after.app).post("/api/auth/get-session").set("cookie", cookie).expect(401);
    const newToken = await tokenFor(after, (await signUp(after.app)).cookie);
    expect(decodeProtectedHeader(newToken).kid).not.toBe(oldKid);
    const keys = createLocalJWKSet(jwks);
    await expect(jwtVerify(newToken, keys)).resolves.toBeTruthy();
    await expect(jwtVerify(oldToken, keys)).rejects.toMatchObject({ code: "ERR_JWKS_NO_MATCHING_KEY" });

    const rows = await after.db.prisma.jwks.findMany({ orderBy: { createdAt: "asc" } });
    expect(rows).toHaveLength(2);
    expect(rows[0]?.id).toBe(oldKid);
    expect(rows[0]?.retiredAt).not.toBeNull();
    expect(rows[1]?.retiredAt).toBeNull();
  });

  it("never signs with a retired key, even when the old secret comes back", async () => {
    const first = await kit({ AUTH_SECRET: "first-secret-first-secret-first-secret-1" });
    const { cookie } = await signUp(first.app);
    const oldKid = decodeProtectedHeader(await tokenFor(first, cookie)).kid;
    const second = await kit({ AUTH_SECRET: "second-secret-second-secret-second-secr" });
    await tokenFor(second, (await signUp(second.app)).cookie);
    const back = await kit({ AUTH_SECRET: "first-secret-first-secret-first-secret-1" });
    const token = await tokenFor(back, (await signUp(back.app)).cookie);
    expect(decodeProtectedHeader(token).kid).not.toBe(oldKid);
    const served = (await request(back.app).get("/api/auth/jwks").expect(200)).body.keys.map((k: { kid: string }) => k.kid);
    expect(served).not.toContain(oldKid);
  });

  it("does not fight a peer that runs with another secret (no churn)", async () => {
    const oldInstance = await kit({ AUTH_SECRET: "first-secret-first-secret-first-secret-1" });
    const { cookie } = await signUp(oldInstance.app);
    await tokenFor(oldInstance, cookie);
    // The new instance's key is to be strictly younger than the old one (keys are ordered by creation).
    const { createdAt } = await oldInstance.db.prisma.jwks.findFirstOrThrow({ where: { retiredAt: null } });
    await vi.waitFor(() => expect(Date.now()).toBeGreaterThan(createdAt.getTime()));
    const newInstance = await kit({ AUTH_SECRET: "second-secret-second-secret-second-secr" });
    const fresh = (await signUp(newInstance.app)).cookie;
    const newKid = decodeProtectedHeader(await tokenFor(newInstance, fresh)).kid;

    // The instance still on the old secret refuses with 503 instead of retiring the new key...
    const refused = await request(oldInstance.app).post("/api/auth/get-session").set("cookie", cookie).expect(503);
    expect(refused.body.error.code).toBe("service_unavailable");
    await request(oldInstance.app).get("/api/auth/jwks").expect(503);
    // ...so the instance with the current secret keeps its key.
    expect(decodeProtectedHeader(await tokenFor(newInstance, fresh)).kid).toBe(newKid);
    expect(await newInstance.db.prisma.jwks.count({ where: { retiredAt: null } })).toBe(1);
  });
});

describe("key creation", () => {
  it("two instances racing on an empty key set end with exactly one usable key", async () => {
    const a = await kit();
    const b = await kit();
    const views = await Promise.all([
      ...Array.from({ length: 8 }, () => a.service.keys.view()),
      ...Array.from({ length: 8 }, () => b.service.keys.view()),
    ]);
    const kids = new Set(views.map((v) => v.signing.kid));
    expect(kids.size).toBe(1);
    expect(await a.db.prisma.jwks.count({ where: { retiredAt: null } })).toBe(1);
    const jwksA = (await request(a.app).get("/api/auth/jwks")).body;
    const jwksB = (await request(b.app).get("/api/auth/jwks")).body;
    expect(jwksA).toEqual(jwksB);
  });

  it("encrypts private keys at rest", async () => {
    const k = await kit();
    await k.service.keys.view();
    const [row] = await k.db.prisma.jwks.findMany();
    expect(row?.privateKey).toMatch(/^v1\.[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(row?.privateKey).not.toContain("PRIVATE KEY");
    expect(row?.alg).toBe("EdDSA");
  });
});

describe("rotation", () => {
  // A rotated key is published at once but signs only after the activation delay (the verifiers'
  // JWKS cache max age + cooldown), so no verifier meets a token signed by a key it has not
  // fetched yet. Before this delay existed the new key signed at once; this test used to expect that.
  it("publishes a new key first, signs with it after the activation delay, keeps the old one a token lifetime", async () => {
    const clock = frozenClock();
    const k = await kit({}, clock.now);
    const { cookie } = await signUp(k.app);
    const first = await tokenFor(k, cookie);
    const firstKid = decodeProtectedHeader(first).kid;
    clock.advance(DEFAULT_KEY_ACTIVATION_DELAY_MS); // the first key is old enough to be the signer
    clock.advance(1_000);
    const created = await k.service.keys.rotate();

    // Published at once, but the old key keeps signing until the new one is activation-delay old.
    const served = async () => (await request(k.app).get("/api/auth/jwks")).body.keys.map((x: { kid: string }) => x.kid);
    expect(await served()).toEqual([created.kid, firstKid]);
    expect(decodeProtectedHeader(await tokenFor(k, cookie)).kid).toBe(firstKid);
    clock.advance(DEFAULT_KEY_ACTIVATION_DELAY_MS - 1);
    const last = await tokenFor(k, cookie);
    expect(decodeProtectedHeader(last).kid).toBe(firstKid);
    clock.advance(1);
    const second = await tokenFor(k, cookie);
    expect(decodeProtectedHeader(second).kid).toBe(created.kid);

    // Tokens of both keys verify during the overlap, including the last one the old key signed.
    const both = createLocalJWKSet((await request(k.app).get("/api/auth/jwks")).body);
    for (const token of [first, last, second]) {
      await expect(jwtVerify(token, both, { currentDate: new Date(clock.now()) })).resolves.toBeTruthy();
    }

    // The old key stays published one token lifetime + skew after it stopped signing.
    clock.advance(JWT_LIFETIME_SECONDS * 1000 + ROTATION_SKEW_MS - 60_000);
    expect(await served()).toEqual([created.kid, firstKid]);
    await expect(jwtVerify(last, both, { currentDate: new Date(clock.now() - ROTATION_SKEW_MS) })).resolves.toBeTruthy();
    expect(await k.service.keys.retireExpired()).toBe(0);
    clock.advance(120_000);
    expect(await served()).toEqual([created.kid]);
    expect(await k.service.keys.retireExpired()).toBe(1);
    expect(await k.db.prisma.jwks.count({ where: { retiredAt: null } })).toBe(1);
  });

  it("signs at once with a fresh key when it is the only usable one (first start)", async () => {
    const clock = frozenClock();
    const k = await kit({}, clock.now);
    const { cookie } = await signUp(k.app);
    const token = await tokenFor(k, cookie);
    const [row] = await k.db.prisma.jwks.findMany();
    expect(decodeProtectedHeader(token).kid).toBe(row?.id);
  });

  it("keeps the oldest key signing while every key is younger than the delay", async () => {
    const clock = frozenClock();
    const k = await kit({}, clock.now);
    const { cookie } = await signUp(k.app);
    const firstKid = decodeProtectedHeader(await tokenFor(k, cookie)).kid;
    clock.advance(60_000);
    const created = await k.service.keys.rotate();
    expect(decodeProtectedHeader(await tokenFor(k, cookie)).kid).toBe(firstKid);
    clock.advance(DEFAULT_KEY_ACTIVATION_DELAY_MS);
    expect(decodeProtectedHeader(await tokenFor(k, cookie)).kid).toBe(created.kid);
  });

  it("honours KEY_ACTIVATION_DELAY_MS", async () => {
    const clock = frozenClock();
    const k = await kit({ KEY_ACTIVATION_DELAY_MS: "5000", JWKS_CACHE_MAX_AGE_MS: "4000", JWKS_COOLDOWN_MS: "1000" }, clock.now);
    const { cookie } = await signUp(k.app);
    await tokenFor(k, cookie);
    clock.advance(10_000);
    const created = await k.service.keys.rotate();
    clock.advance(4_999);
    expect(decodeProtectedHeader(await tokenFor(k, cookie)).kid).not.toBe(created.kid);
    clock.advance(1);
    expect(decodeProtectedHeader(await tokenFor(k, cookie)).kid).toBe(created.kid);
  });

  it("rotates on the KEY_ROTATION_DAYS interval exactly once across racing instances", async () => {
    const clock = frozenClock();
    const a = await kit({}, clock.now);
    const b = await kit({}, clock.now);
    const first = (await a.service.keys.view()).signing;
    const interval = 30 * 24 * 3600 * 1000;
    clock.advance(interval - 1);
    expect(await a.service.keys.rotateIfDue(interval)).toBeUndefined();
    expect(await a.service.keys.rotateIfDue(0)).toBeUndefined();
    clock.advance(1);
    const results = await Promise.all([
      ...Array.from({ length: 4 }, () => a.service.keys.rotateIfDue(interval)),
      ...Array.from({ length: 4 }, () => b.service.keys.rotateIfDue(interval)),
    ]);
    const created = results.filter((r) => r !== undefined);
    expect(created).toHaveLength(1);
    expect(await a.db.prisma.jwks.count({ where: { retiredAt: null } })).toBe(2);
    expect((await b.service.keys.view()).signing.kid).toBe(first.kid);
    clock.advance(DEFAULT_KEY_ACTIVATION_DELAY_MS);
    expect((await b.service.keys.view()).signing.kid).toBe(created[0]?.kid);
  });
});
