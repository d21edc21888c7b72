import fc from "fast-check";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";

// Count argon2 work, to prove oversized passwords are refused before any hashing.
const argon = { hash: 0, verify: 0 };
vi.mock("@node-rs/argon2", async (importOriginal) => {
  const real = await importOriginal<typeof import("@node-rs/argon2")>();
  return {
    ...real,
    hash: (...args: Parameters<typeof real.hash>) => {
      argon.hash += 1;
      return real.hash(...args);
    },
    verify: (...args: Parameters<typeof real.verify>) => {
      argon.verify += 1;
      return real.verify(...args);
    },
  };
});

const { identityKit, signUp } = await import("./kit.js");
type Kit = Awaited<ReturnType<typeof identityKit>>;

let kit: Kit;
beforeAll(async () => {
  kit = await identityKit();
});
afterAll(async () => {
  await kit?.close();
});

const SIGN_UP = "/api/auth/sign-up/email";
const SIGN_IN = "/api/auth/sign-in/email";

/** Every answer must be a 4xx in the error envelope (or a 200), never a 5xx. */
function expectClientError(res: request.Response, status?: number) {
  if (status !== undefined) expect(res.status).toBe(status);
  expect(res.status).toBeGreaterThanOrEqual(400);
  expect(res.status).toBeLessThan(500);
  expect(res.body).toMatchObject({ ok: false, error: { code: expect.any(String), message: expect.any(String) } });
}

const raw = (path: string, body: string | Buffer, type = "application/json") =>
  request(kit.app).post(path).set("content-type", type).send(body);

describe("malformed and oversized JSON", () => {
  it.each([
    ["truncated", "{"],
    ["single quotes", "{'email':'a@b.co'}"],
    ["trailing comma", '{"email":"a@b.co",}'],
    ["NaN", '{"email":NaN}'],
    ["comment", '/* */{"email":"a@b.co"}'],
    ["binary", "\u0000\u0001\u0002"],
    ["a bare string", '"just a string"'],
    ["a number", "12"],
    ["null", "null"],
  ])("%s answers 400, not 500", async (_name, body) => {
    for (const path of [SIGN_UP, SIGN_IN]) {
      const res = await raw(path, body);
      expectClientError(res, 400);
      expect(["invalid_json", "validation_failed"]).toContain(res.body.error.code);
    }
  });

  it("a body over 16 KiB answers 413 without being parsed", async () => {
    const res = await raw(SIGN_UP, JSON.stringify({ email: "a@b.co", password: "x".repeat(20_000), name: "A" }));
    expectClientError(res, 413);
    expect(res.body.error.code).toBe("payload_too_large");
  });

  it("a deeply nested body answers 400", async () => {
    expectClientError(await raw(SIGN_IN, `${"[".repeat(5_000)}${"]".repeat(5_000)}`), 400);
    expectClientError(await raw(SIGN_IN, `${'{"a":'.repeat(2_000)}1${"}".repeat(2_000)}`), 400);
  });

  it("another content type answers 415; a lying Content-Length 400", async () => {
    expectClientError(await raw(SIGN_IN, "email=a@b.co&password=x", "application/x-www-form-urlencoded"), 415);
    expectClientError(await raw(SIGN_IN, "<xml/>", "text/xml"), 415);
    const lying = await request(kit.app).post(SIGN_IN).set("content-type", "application/json").set("content-length", "5").send('{"a":1}');
    expect(lying.status).toBeLessThan(500);
  });
});

describe("missing fields and wrong types", () => {
  it.each([
    [SIGN_UP, {}, ["email", "name", "password"]],
    [SIGN_UP, { email: "a@b.co", password: "correct horse" }, ["name"]],
    [SIGN_UP, { email: "a@b.co", name: "A" }, ["password"]],
    [SIGN_IN, { password: "x" }, ["email"]],
    [SIGN_IN, { email: "a@b.co" }, ["password"]],
    [SIGN_IN, { email: ["a@b.co"], password: 1 }, ["email", "password"]],
    [SIGN_IN, { email: "a@b.co", password: "x", role: "admin" }, [""]],
  ])("%s %j names the problem in a 400", async (path, body, fields) => {
    const res = await request(kit.app).post(path).send(body);
    expectClientError(res, 400);
    expect(res.body.error.code).toBe("validation_failed");
    const paths = (res.body.error.issues as { path: string }[]).map((i) => i.path);
    for (const field of fields) expect(paths.some((p) => p.startsWith(field))).toBe(true);
  });
});

describe("SQL- and NoSQL-looking input", () => {
  it("operator objects and injection strings are refused or stored literally, never executed", async () => {
    for (const email of [{ $ne: null }, { $gt: "" }, { $regex: ".*" }]) {
      expectClientError(await request(kit.app).post(SIGN_IN).send({ email, password: "x" }), 400);
    }
    expectClientError(
      await request(kit.app)
        .post(SIGN_IN)
        .send({ email: "a@b.co", password: { $ne: null } }),
      400,
    );
    expectClientError(await request(kit.app).post(SIGN_IN).send({ email: "' OR 1=1 --", password: "x" }), 400);
    expectClientError(await request(kit.app).post(SIGN_IN).send({ email: "admin@example.com' --", password: "x" }), 400);
    const wrong = await request(kit.app).post(SIGN_IN).send({ email: "a@b.co", password: "' OR '1'='1" });
    expectClientError(wrong, 401);
    const name = `Robert'); DROP TABLE "user";--`;
    const { user } = await signUp(kit.app, { name, password: `pw' OR ''='` });
    const row = await kit.db.prisma.user.findUniqueOrThrow({ where: { id: user.id } });
    expect(row.name).toBe(name);
    expect(await kit.db.prisma.user.count()).toBeGreaterThan(0);
  });

  it("__proto__ and constructor keys are refused and pollute nothing", async () => {
    const res = await raw(SIGN_IN, '{"email":"a@b.co","password":"x","__proto__":{"admin":true},"constructor":{"prototype":{"p":1}}}');
    expectClientError(res, 400);
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
    expect(({} as Record<string, unknown>).p).toBeUndefined();
  });

  it("NUL characters and lone surrogates answer 400", async () => {
    expectClientError(await request(kit.app).post(SIGN_UP).send({ email: "a@b.co", password: "correct horse", name: "A\u0000B" }), 400);
    expectClientError(await raw(SIGN_UP, '{"email":"a@b.co","password":"correct horse","name":"\\ud800"}'), 400);
  });
});

describe("unicode and case variants of emails", () => {
  it("one account per address, whatever the case or Unicode composition", async () => {
    const { body } = await signUp(kit.app, { email: `Jos\u00e9.${Date.now()}@Example.COM` });
    const decomposed = body.email.replace("\u00e9", "e\u0301");
    for (const email of [body.email.toLowerCase(), body.email.toUpperCase(), decomposed, `  ${body.email}  `]) {
      expect((await request(kit.app).post(SIGN_IN).send({ email, password: body.password })).status).toBe(200);
    }
    const dup = await request(kit.app)
      .post(SIGN_UP)
      .send({ ...body, email: decomposed.toUpperCase() });
    expectClientError(dup, 409);
  });

  it("odd addresses get a clear 4xx or a normal answer, never a 500", async () => {
    const odd = [
      "user@b\u00fccher.de",
      "\uff41\uff42\uff43@example.com",
      "a\u200d@example.com",
      "\u202euser@example.com",
      "user@[127.0.0.1]",
      '"quoted"@example.com',
      "a@b",
      `${"a".repeat(250)}@b.co`,
      "@@",
      "\ud83d\ude00@example.com",
    ];
    for (const email of odd) {
      const res = await request(kit.app).post(SIGN_IN).send({ email, password: "whatever" });
      expect([400, 401]).toContain(res.status);
    }
  });
});

describe("very long passwords", () => {
  it("are refused before any hashing", async () => {
    const before = { ...argon };
    expectClientError(
      await request(kit.app)
        .post(SIGN_UP)
        .send({ email: "long@example.com", password: "x".repeat(129), name: "L" }),
      400,
    );
    expectClientError(
      await request(kit.app)
        .post(SIGN_IN)
        .send({ email: "long@example.com", password: "x".repeat(513) }),
      400,
    );
    expectClientError(
      await request(kit.app)
        .post(SIGN_IN)
        .send({ email: "long@example.com", password: "x".repeat(17_000) }),
      413,
    );
    expect(argon).toEqual(before);
    // The longest accepted ones still work.
    const { body } = await signUp(kit.app, { password: "y".repeat(128) });
    expect((await request(kit.app).post(SIGN_IN).send({ email: body.email, password: body.password })).status).toBe(200);
  });
});

describe("fuzzed credential bodies (fast-check)", () => {
  it("any JSON value or raw text answers a 4xx (or 200), never a 5xx", async () => {
    const json = fc.oneof(
      fc.jsonValue(),
      fc.record({ email: fc.oneof(fc.string(), fc.emailAddress(), fc.jsonValue()), password: fc.oneof(fc.string(), fc.jsonValue()) }),
      fc.record({ email: fc.emailAddress(), password: fc.string({ maxLength: 600 }), name: fc.oneof(fc.string(), fc.jsonValue()) }),
    );
    await fc.assert(
      fc.asyncProperty(json, fc.boolean(), async (body, up) => {
        const res = await raw(up ? SIGN_UP : SIGN_IN, JSON.stringify(body) ?? "null");
        expect(res.status).toBeLessThan(500);
      }),
      { numRuns: 300 },
    );
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: "binary", maxLength: 200 }), async (text) => {
        const res = await raw(SIGN_IN, text);
        expect(res.status).toBeLessThan(500);
        expect(res.status).not.toBe(200);
      }),
      { numRuns: 300 },
    );
  });
});
