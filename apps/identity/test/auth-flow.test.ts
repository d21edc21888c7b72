import { createHmac } from "node:crypto";
import { JWT_LIFETIME_SECONDS, SET_AUTH_JWT_HEADER } from "@app/contracts";
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from "jose";

import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sessionKey } from "../src/services/sessions.js";
import { frozenClock, identityKit, type Kit, ORIGIN, SECRET, sessionCookie, sessionCookieLine, signUp } from "./kit.js";

const clock = frozenClock();
let kit: Kit;

beforeAll(async () => {
  kit = await identityKit({ now: clock.now });
});
afterAll(async () => {
  await kit?.close();
});

async function jwks() {
  const res = await request(kit.app).get("/api/auth/jwks").expect(200);
  return createLocalJWKSet(res.body);
}

function getSession(cookie: string) {
  return request(kit.app).post("/api/auth/get-session").set("cookie", cookie);
}

describe("sign-up and sign-in: a cookie session, never a JWT", () => {
  it("sign-up inserts a session, sets the cookie with the right attributes and carries no JWT", async () => {
    const { res, user } = await signUp(kit.app, { email: "Ann.Lee@Example.COM", name: "Ann" });
    expect(res.headers[SET_AUTH_JWT_HEADER]).toBeUndefined();
    expect(user.email).toBe("ann.lee@example.com");
    const line = sessionCookieLine(res) ?? "";
    expect(line).toMatch(/; HttpOnly/);
    expect(line).toMatch(/; SameSite=Lax/);
    expect(line).toMatch(/; Path=\//);
    expect(line).not.toMatch(/; Secure/);
    expect(JSON.stringify(res.body)).not.toContain("password");
    const rows = await kit.db.prisma.session.findMany({ where: { userId: user.id } });
    expect(rows).toHaveLength(1);
  });

  it("marks the cookie Secure when the base URL is https", async () => {
    const https = await identityKit({ env: { BASE_URL: "https://auth.example.com" } });
    try {
      const { res } = await signUp(https.app);
      expect(sessionCookieLine(res)).toMatch(/; Secure/);
    } finally {
      await https.close();
    }
  });

  it("stores only a MAC of the cookie secret, keyed from AUTH_SECRET", async () => {
    const { cookie, user } = await signUp(kit.app);
    const [id, secret] = (cookie.split("=")[1] ?? "").split(".");
    const row = await kit.db.prisma.session.findUniqueOrThrow({ where: { id: id ?? "" } });
    expect(row.userId).toBe(user.id);
    expect(Buffer.from(row.secretHash)).toEqual(
      createHmac("sha256", sessionKey(SECRET))
        .update(secret ?? "")
        .digest(),
    );
    expect(JSON.stringify(row)).not.toContain(secret);
    // What a database leak yields (the stored hash) does not work as a cookie.
    const leaked = `identity.session_token=${id}.${Buffer.from(row.secretHash).toString("base64url").slice(0, 43)}`;
    await request(kit.app).post("/api/auth/get-session").set("cookie", leaked).expect(401);
  });

  it("sign-in with the right password sets a new session cookie and no JWT", async () => {
    const { body } = await signUp(kit.app);
    const res = await request(kit.app)
      .post("/api/auth/sign-in/email")
      .send({ email: body.email.toUpperCase(), password: body.password })
      .expect(200);
    expect(sessionCookie(res)).toBeDefined();
    expect(res.headers[SET_AUTH_JWT_HEADER]).toBeUndefined();
    expect(res.body.user.email).toBe(body.email);
  });

  it("answers the same 401 for an unknown email and a wrong password", async () => {
    const { body } = await signUp(kit.app);
    const wrong = await request(kit.app)
      .post("/api/auth/sign-in/email")
      .send({ email: body.email, password: "wrong password" })
      .expect(401);
    const unknown = await request(kit.app)
      .post("/api/auth/sign-in/email")
      .send({ email: "nobody@example.com", password: "wrong password" })
      .expect(401);
    expect(wrong.body).toEqual({
      ok: false,
      error: { code: "invalid_credentials", message: "invalid email or password" },
      // better-auth's client reads them at the top (the error handler's topLevelFields, apps/identity/src/app.ts).
      code: "invalid_credentials",
      message: "invalid email or password",
    });
    expect(unknown.body).toEqual(wrong.body);
    expect(sessionCookie(wrong)).toBeUndefined();
  });

  it("refuses a duplicate email, whatever its case, with 409", async () => {
    const { body } = await signUp(kit.app);
    const res = await request(kit.app)
      .post("/api/auth/sign-up/email")
      .send({ ...body, email: body.email.toUpperCase() })
      .expect(409);
    expect(res.body.error.code).toBe("email_taken");
  });
});

describe("get-session: the only response with set-auth-jwt", () => {
  it("issues an EdDSA JWT with the documented header and claims", async () => {
    const { cookie, user } = await signUp(kit.app, { name: "Claims Person" });
    const res = await getSession(cookie).expect(200);
    const token = res.headers[SET_AUTH_JWT_HEADER] as string;
    expect(token.split(".")).toHaveLength(3);
    expect(res.body.user.id).toBe(user.id);
    expect(res.body.session.userId).toBe(user.id);
    expect(res.headers["cache-control"]).toBe("no-store");
    const header = decodeProtectedHeader(token);
    expect(header).toEqual({ alg: "EdDSA", kid: expect.any(String), typ: "JWT" });
    const { payload } = await jwtVerify(token, await jwks(), {
      issuer: kit.config.issuer,
      audience: kit.config.audience,
      currentDate: new Date(clock.now()),
    });
    const iat = Math.floor(clock.now() / 1000);
    expect(payload).toEqual({
      sub: user.id,
      iat,
      exp: iat + JWT_LIFETIME_SECONDS,
      iss: "http://localhost:3000",
      aud: "http://localhost:3000",
      jti: expect.any(String),
      name: "Claims Person",
      email: user.email,
    });
    expect(JWT_LIFETIME_SECONDS).toBe(30 * 24 * 3600);
  });

  it("works with GET too", async () => {
    const { cookie } = await signUp(kit.app);
    const res = await request(kit.app).get("/api/auth/get-session").set("cookie", cookie).expect(200);
    expect(res.headers[SET_AUTH_JWT_HEADER]).toBeTruthy();
  });

  it("gives no JWT without a valid session, and clears a stale cookie", async () => {
    const none = await request(kit.app).post("/api/auth/get-session").expect(401);
    expect(none.headers[SET_AUTH_JWT_HEADER]).toBeUndefined();
    expect(none.body.error.code).toBe("unauthorized");
    const forged = await getSession("identity.session_token=AAAAAAAAAAAAAAAAAAAAAA.BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB").expect(
      401,
    );
    expect(forged.headers[SET_AUTH_JWT_HEADER]).toBeUndefined();
    expect(sessionCookieLine(forged)).toMatch(/Expires=Thu, 01 Jan 1970/);
    const { cookie } = await signUp(kit.app);
    const tampered = `${cookie.slice(0, -2)}${cookie.endsWith("AA") ? "BB" : "AA"}`;
    await getSession(tampered).expect(401);
  });

  it("reads the session and the key set with one query each", async () => {
    const { cookie } = await signUp(kit.app);
    await getSession(cookie).expect(200);
    const before = kit.db.queryCount();
    await getSession(cookie).expect(200);
    expect(kit.db.queryCount() - before).toBe(2);
  });

  it("slides the session expiry and ends it after its lifetime", async () => {
    const { cookie } = await signUp(kit.app);
    const ttl = kit.config.sessionTtlMs;
    clock.advance(ttl / 2 + 60_000);
    const slid = await getSession(cookie).expect(200);
    const renewed = sessionCookieLine(slid);
    expect(renewed).toBeDefined();
    expect(new Date(slid.body.session.expiresAt).getTime()).toBe(clock.now() + ttl);
    clock.advance(ttl / 2 + 60_000);
    await getSession(cookie).expect(200);
    clock.advance(ttl + 1);
    await getSession(cookie).expect(401);
  });
});

describe("the JWT outlives its session (no instant revocation)", () => {
  it("sign-out deletes the session and clears the cookie; the issued JWT still verifies", async () => {
    const { cookie, user } = await signUp(kit.app);
    const token = (await getSession(cookie).expect(200)).headers[SET_AUTH_JWT_HEADER] as string;
    const out = await request(kit.app).post("/api/auth/sign-out").set("cookie", cookie).expect(200);
    expect(sessionCookieLine(out)).toMatch(/Expires=Thu, 01 Jan 1970/);
    expect(await kit.db.prisma.session.count({ where: { userId: user.id } })).toBe(0);
    await getSession(cookie).expect(401);
    const { payload } = await jwtVerify(token, await jwks(), { currentDate: new Date(clock.now()) });
    expect(payload.sub).toBe(user.id);
  });

  it("a deleted session row has no effect on an issued JWT until it expires", async () => {
    const { cookie, user } = await signUp(kit.app);
    const token = (await getSession(cookie).expect(200)).headers[SET_AUTH_JWT_HEADER] as string;
    await kit.db.prisma.session.deleteMany({ where: { userId: user.id } });
    const keys = await jwks();
    const almost = clock.now() + (JWT_LIFETIME_SECONDS - 60) * 1000;
    await expect(jwtVerify(token, keys, { currentDate: new Date(almost) })).resolves.toBeTruthy();
    const after = clock.now() + (JWT_LIFETIME_SECONDS + 1) * 1000;
    await expect(jwtVerify(token, keys, { currentDate: new Date(after) })).rejects.toMatchObject({ code: "ERR_JWT_EXPIRED" });
  });
});

describe("GET /api/auth/jwks", () => {
  it("serves public keys only, with kid, alg and use, cacheable for 10 minutes", async () => {
    const res = await request(kit.app).get("/api/auth/jwks").expect(200);
    expect(res.headers["cache-control"]).toBe("public, max-age=600");
    expect(res.body.keys.length).toBeGreaterThanOrEqual(1);
    for (const key of res.body.keys) {
      expect(Object.keys(key).sort()).toEqual(["alg", "crv", "kid", "kty", "use", "x"]);
      expect(key).toMatchObject({ kty: "OKP", crv: "Ed25519", alg: "EdDSA", use: "sig" });
    }
    const rows = await kit.db.prisma.jwks.findMany();
    for (const row of rows) expect(JSON.stringify(res.body)).not.toContain(row.privateKey.split(".")[3]);
    expect(JSON.stringify(res.body)).not.toMatch(/"d"|PRIVATE/);
  });
});

describe("bad input: clear 4xx in the error envelope", () => {
  it.each([
    ["malformed JSON", (r: request.Test) => r.set("content-type", "application/json").send('{"email":'), 400, "invalid_json"],
    ["missing fields", (r: request.Test) => r.send({}), 400, "validation_failed"],
    ["non-string email", (r: request.Test) => r.send({ email: { $gt: "" }, password: "x" }), 400, "validation_failed"],
    ["unknown field", (r: request.Test) => r.send({ email: "a@b.co", password: "x", admin: true }), 400, "validation_failed"],
    ["overlong password", (r: request.Test) => r.send({ email: "a@b.co", password: "x".repeat(600) }), 400, "validation_failed"],
    ["oversized body", (r: request.Test) => r.send({ email: "a@b.co", password: "x".repeat(20_000) }), 413, "payload_too_large"],
    ["form body", (r: request.Test) => r.type("form").send("email=a@b.co&password=x"), 415, "unsupported_media_type"],
    ["text body", (r: request.Test) => r.set("content-type", "text/plain").send("hello"), 415, "unsupported_media_type"],
  ])("%s", async (_name, build, status, code) => {
    const res = await build(request(kit.app).post("/api/auth/sign-in/email")).expect(status);
    expect(res.body.ok).toBe(false);
    expect(res.body.error.code).toBe(code);
  });

  it.each([
    ["NUL in email", { email: "a\u0000@example.com", password: "long enough 1" }, "email"],
    ["lone surrogate in email", { email: "a\ud800@example.com", password: "long enough 1" }, "email"],
    ["lone surrogate in password", { email: "a@example.com", password: "long\ud800enough1" }, "password"],
  ])("refuses %s with 400 naming the field, never 500", async (_name, body, field) => {
    for (const path of ["/api/auth/sign-in/email", "/api/auth/sign-up/email"]) {
      const res = await request(kit.app)
        .post(path)
        .send({ name: "N", ...body })
        .expect(400);
      expect(res.body.error.issues.map((i: { path: string }) => i.path)).toContain(field);
    }
    const res = await request(kit.app)
      .post("/api/auth/sign-up/email")
      .send({ email: "n@example.com", password: "long enough 1", name: "a\u0000b" })
      .expect(400);
    expect(res.body.error.issues[0].path).toBe("name");
  });

  it("answers 400 for a corrupt gzip body", async () => {
    const bad = await request(kit.app)
      .post("/api/auth/sign-in/email")
      .set("content-type", "application/json")
      .set("content-encoding", "gzip")
      .send("notgzip")
      .expect(400);
    expect(bad.body.error.code).toBe("bad_request");
  });

  it("names the invalid field", async () => {
    const res = await request(kit.app)
      .post("/api/auth/sign-up/email")
      .send({ email: "not-an-email", password: "long enough pw", name: "A" })
      .expect(400);
    expect(res.body.error.issues).toEqual([{ path: "email", message: "email is not a valid address" }]);
    expect(res.body.error.message).toContain("email");
  });

  it("answers 404 in the envelope for unknown paths", async () => {
    const res = await request(kit.app).get("/api/auth/nope").expect(404);
    expect(res.body.error.code).toBe("not_found");
  });
});

describe("CORS and origin checks", () => {
  it("allows the configured origin with credentials and exposes set-auth-jwt", async () => {
    const pre = await request(kit.app)
      .options("/api/auth/get-session")
      .set("origin", ORIGIN)
      .set("access-control-request-method", "POST")
      .expect(204);
    expect(pre.headers["access-control-allow-origin"]).toBe(ORIGIN);
    expect(pre.headers["access-control-allow-credentials"]).toBe("true");
    const { cookie } = await signUp(kit.app);
    const res = await getSession(cookie).set("origin", ORIGIN).expect(200);
    expect(res.headers["access-control-expose-headers"]).toContain("set-auth-jwt");
  });

  it("gives other origins no CORS grant and refuses their state-changing requests", async () => {
    const pre = await request(kit.app)
      .options("/api/auth/get-session")
      .set("origin", "http://evil.example")
      .set("access-control-request-method", "POST");
    expect(pre.headers["access-control-allow-origin"]).toBeUndefined();
    const { body } = await signUp(kit.app);
    const res = await request(kit.app)
      .post("/api/auth/sign-in/email")
      .set("origin", "http://evil.example")
      .send({ email: body.email, password: body.password })
      .expect(403);
    expect(res.body.error.code).toBe("origin_not_allowed");
    await request(kit.app).post("/api/auth/sign-out").set("sec-fetch-site", "cross-site").expect(403);
    await request(kit.app).post("/api/auth/get-session").set("origin", "http://evil.example").expect(403);
  });

  it("reports ready when the database answers", async () => {
    await request(kit.app).get("/readyz").expect(200, { status: "ready" });
  });
});

describe("logs", () => {
  it("never contain passwords, cookies, tokens or the secret", async () => {
    const { cookie, body } = await signUp(kit.app);
    const token = (await getSession(cookie).expect(200)).headers[SET_AUTH_JWT_HEADER] as string;
    await request(kit.app).post("/api/auth/sign-in/email").send({ email: body.email, password: "wrong password" });
    const text = kit.logs.join("");
    expect(text.length).toBeGreaterThan(0);
    for (const secret of [body.password, "wrong password", cookie.split("=")[1] ?? "", token, SECRET]) expect(text).not.toContain(secret);
  });
});
