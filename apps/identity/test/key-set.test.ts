import { JWT_LIFETIME_SECONDS, SET_AUTH_JWT_HEADER } from "@app/contracts";
import { createTestDatabase, type TestDatabase } from "@app/db/testing";
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from "jose";
import request from "supertest";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ROTATION_SKEW_MS } from "../src/services/key-set.js";
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

    const newToken = await tokenFor(after, cookie);
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
    await tokenFor(second, cookie);
    const back = await kit({ AUTH_SECRET: "first-secret-first-secret-first-secret-1" });
    const token = await tokenFor(back, cookie);
    expect(decodeProtectedHeader(token).kid).not.toBe(oldKid);
    const served = (await request(back.app).get("/api/auth/jwks").expect(200)).body.keys.map((k: { kid: string }) => k.kid);
    expect(served).not.toContain(oldKid);
  });

  it("does not fight a peer that runs with another secret (no churn)", async () => {
    const oldInstance = await kit({ AUTH_SECRET: "first-secret-first-secret-first-secret-1" });
    const { cookie } = await signUp(oldInstance.app);
    await tokenFor(oldInstance, cookie);
    await new Promise((r) => setTimeout(r, 5));
    const newInstance = await kit({ AUTH_SECRET: "second-secret-second-secret-second-secr" });
    const newKid = decodeProtectedHeader(await tokenFor(newInstance, cookie)).kid;

    // The instance still on the old secret refuses with 503 instead of retiring the new key...
    const refused = await request(oldInstance.app).post("/api/auth/get-session").set("cookie", cookie).expect(503);
    expect(refused.body.error.code).toBe("service_unavailable");
    await request(oldInstance.app).get("/api/auth/jwks").expect(503);
    // ...so the instance with the current secret keeps its key.
    expect(decodeProtectedHeader(await tokenFor(newInstance, cookie)).kid).toBe(newKid);
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
  it("the newest key signs; the previous one stays published for a token lifetime plus skew", async () => {
    const clock = frozenClock();
    const k = await kit({}, clock.now);
    const { cookie } = await signUp(k.app);
    const first = await tokenFor(k, cookie);
    clock.advance(1_000);
    await k.service.keys.rotate();
    const second = await tokenFor(k, cookie);
    expect(decodeProtectedHeader(second).kid).not.toBe(decodeProtectedHeader(first).kid);

    const both = createLocalJWKSet((await request(k.app).get("/api/auth/jwks")).body);
    await expect(jwtVerify(first, both, { currentDate: new Date(clock.now()) })).resolves.toBeTruthy();
    await expect(jwtVerify(second, both, { currentDate: new Date(clock.now()) })).resolves.toBeTruthy();

    clock.advance(JWT_LIFETIME_SECONDS * 1000 + ROTATION_SKEW_MS - 60_000);
    expect((await request(k.app).get("/api/auth/jwks")).body.keys).toHaveLength(2);
    clock.advance(120_000);
    expect((await request(k.app).get("/api/auth/jwks")).body.keys).toHaveLength(1);
    expect(await k.service.keys.retireExpired()).toBe(1);
    expect(await k.db.prisma.jwks.count({ where: { retiredAt: null } })).toBe(1);
  });
});
