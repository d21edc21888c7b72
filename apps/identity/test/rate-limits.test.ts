import request from "supertest";
import { afterEach, describe, expect, it } from "vitest";
import type { RateLimitRedis } from "../src/middleware/rate-limit-stores.js";
import { accountDelayMs } from "../src/middleware/rate-limits.js";
import { frozenClock, identityKit, type Kit, signUp } from "./kit.js";

const open: Kit[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((k) => k.close()));
});

async function kit(env: Record<string, string>, now?: () => number, extra: { rateLimitRedis?: RateLimitRedis } = {}) {
  const k = await identityKit({ env, ...(now ? { now } : {}), ...extra });
  open.push(k);
  return k;
}

const signIn = (k: Kit, body: { email: string; password: string }, ip?: string) => {
  const req = request(k.app).post("/api/auth/sign-in/email");
  if (ip) req.set("x-forwarded-for", ip);
  return req.send({ email: body.email, password: body.password });
};

/** A distinct client address per attempt (trust proxy is loopback, as behind the gateway). */
const ipOf = (i: number) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;

function expectLimited(res: request.Response) {
  expect(res.status).toBe(429);
  expect(res.body).toEqual({
    ok: false,
    error: { code: "rate_limited", message: expect.any(String) },
    code: "rate_limited",
    message: expect.any(String),
  });
  expect(Number(res.headers["retry-after"])).toBeGreaterThanOrEqual(1);
}

/** Runs `count` calls of `attempt`, `width` at a time; returns the status of each. */
async function flood(count: number, width: number, attempt: (i: number) => Promise<request.Response>): Promise<number[]> {
  const statuses: number[] = [];
  for (let start = 0; start < count; start += width) {
    const batch = Array.from({ length: Math.min(width, count - start) }, (_, j) => attempt(start + j));
    for (const res of await Promise.all(batch)) statuses.push(res.status);
  }
  return statuses;
}

function tally(statuses: number[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const s of statuses) counts[s] = (counts[s] ?? 0) + 1;
  return counts;
}

describe("per-IP limits (in memory)", () => {
  it("answers 429 rate_limited with Retry-After once an address used its sign-in quota, and only for that address", async () => {
    const clock = frozenClock(Date.now());
    const k = await kit({ RATE_LIMIT_IP_MAX: "3", RATE_LIMIT_IP_WINDOW_MS: "60000" }, clock.now);
    for (let i = 0; i < 3; i += 1) expect((await signIn(k, { email: "a@b.co", password: "wrong" }, "203.0.113.7")).status).toBe(401);
    const limited = await signIn(k, { email: "a@b.co", password: "wrong" }, "203.0.113.7");
    expectLimited(limited);
    expect(limited.headers["retry-after"]).toBe("60");
    // Malformed bodies count too: the per-IP limit runs before the body is read.
    expectLimited(await request(k.app).post("/api/auth/sign-in/email").set("x-forwarded-for", "203.0.113.7").send("{nope"));
    expect((await signIn(k, { email: "a@b.co", password: "wrong" }, "203.0.113.8")).status).toBe(401);
    // Sign-up has its own quota.
    await signUp(k.app);
    clock.advance(60_000);
    expect((await signIn(k, { email: "a@b.co", password: "wrong" }, "203.0.113.7")).status).toBe(401);
  });

  it("limits sign-up per address as well", async () => {
    const k = await kit({ RATE_LIMIT_IP_MAX: "2" });
    await signUp(k.app);
    await signUp(k.app);
    const res = await request(k.app)
      .post("/api/auth/sign-up/email")
      .send({ email: "third@example.com", password: "correct horse battery", name: "Third" });
    expectLimited(res);
    expect(await k.db.prisma.user.count({ where: { email: "third@example.com" } })).toBe(0);
  });
});

describe("per (account, IP) limits and the account-wide delay (in memory)", () => {
  it("locks the (account, IP) pair after N failures with Retry-After; the owner from another address signs in", async () => {
    const clock = frozenClock(Date.now());
    const k = await kit({ RATE_LIMIT_ACCOUNT_MAX: "3", RATE_LIMIT_ACCOUNT_WINDOW_MS: "900000" }, clock.now);
    const { body } = await signUp(k.app);
    const wrong = { email: body.email, password: "wrong password" };
    const attacker = "203.0.113.66";
    for (let i = 0; i < 2; i += 1) expect((await signIn(k, wrong, attacker)).status).toBe(401);
    expect((await signIn(k, body, attacker)).status).toBe(200); // success: the count starts again
    for (let i = 0; i < 3; i += 1) expect((await signIn(k, wrong, attacker)).status).toBe(401);
    // The pair is locked for this window, even with the right password...
    const locked = await signIn(k, { email: body.email.toUpperCase(), password: body.password }, attacker);
    expectLimited(locked);
    expect(Number(locked.headers["retry-after"])).toBeLessThanOrEqual(900);
    // ...the same address may still try other accounts (up to the per-IP limit)...
    const other = await signUp(k.app);
    expect((await signIn(k, other.body, attacker)).status).toBe(200);
    // ...the owner is not locked out from another address...
    expect((await signIn(k, body, "198.51.100.20")).status).toBe(200);
    // ...and the pair's lock ends with the window: never for ever.
    clock.advance(900_000);
    expect((await signIn(k, body, attacker)).status).toBe(200);
  });

  it("slows an account's attempts after DELAY_AFTER failures from any address, doubling up to the cap, before the password check", async () => {
    const k = await kit({ RATE_LIMIT_ACCOUNT_DELAY_AFTER: "2", RATE_LIMIT_ACCOUNT_DELAY_MS: "10", RATE_LIMIT_ACCOUNT_DELAY_MAX_MS: "40" });
    const { body } = await signUp(k.app);
    const wrong = { email: body.email, password: "wrong password" };
    for (let i = 0; i < 6; i += 1) expect((await signIn(k, wrong, ipOf(i))).status).toBe(401);
    expect((await signIn(k, body, ipOf(99))).status).toBe(200);
    const delays = k.logs.filter((l) => l.includes("delayed: recent failed attempts")).map((l) => JSON.parse(l).delayMs);
    // Failures before each attempt: 2 → 10 ms, 3 → 20, 4 → 40, 5 → 40 (cap), then the owner's (6 → 40).
    expect(delays).toEqual([10, 20, 40, 40, 40]);
    // The owner's success reset the account: the next failure is not delayed.
    expect((await signIn(k, wrong, ipOf(100))).status).toBe(401);
    expect(k.logs.filter((l) => l.includes("delayed: recent failed attempts"))).toHaveLength(5);
    expect(k.logs.join("\n")).not.toContain(body.email);
  });

  it("counts sign-up attempts on a taken email (enumeration) per address, not successful sign-ups", async () => {
    const k = await kit({ RATE_LIMIT_ACCOUNT_MAX: "2" });
    const { body } = await signUp(k.app);
    for (let i = 0; i < 2; i += 1) expect((await request(k.app).post("/api/auth/sign-up/email").send(body)).status).toBe(409);
    expectLimited(await request(k.app).post("/api/auth/sign-up/email").send(body));
  });
});

describe("accountDelayMs", () => {
  it("is zero up to delayAfter, then doubles from delayMs up to delayMaxMs", () => {
    const settings = { delayAfter: 5, delayMs: 500, delayMaxMs: 4_000 };
    expect([0, 4, 5, 6, 7, 8, 9, 1_000].map((f) => accountDelayMs(f, settings))).toEqual([0, 0, 500, 1_000, 2_000, 4_000, 4_000, 4_000]);
    expect(accountDelayMs(3, { delayAfter: 0, delayMs: 0, delayMaxMs: 4_000 })).toBe(0);
  });
});

describe("targeted lockout: an attacker's 50 failures from one address", () => {
  it("locks the attacker's address with 429 and Retry-After, while the owner signs in from another address", async () => {
    const k = await kit({
      RATE_LIMIT_ACCOUNT_MAX: "10",
      RATE_LIMIT_ACCOUNT_DELAY_AFTER: "5",
      RATE_LIMIT_ACCOUNT_DELAY_MS: "1",
      RATE_LIMIT_ACCOUNT_DELAY_MAX_MS: "4",
    });
    const { body } = await signUp(k.app);
    const statuses = await flood(50, 10, (i) => signIn(k, { email: body.email, password: `guess-${i}` }, "203.0.113.99"));
    const counts = tally(statuses);
    process.stdout.write(`50 guesses on one account from one address: ${JSON.stringify(counts)}\n`);
    expect(counts[401]).toBe(10);
    expect(counts[429]).toBe(40);
    expectLimited(await signIn(k, body, "203.0.113.99"));
    expect((await signIn(k, body, "198.51.100.77")).status).toBe(200);
  });
});

describe("credential stuffing", () => {
  it("one account from many addresses: never a lock for the owner, only a capped delay; no 5xx", async () => {
    const k = await kit({
      RATE_LIMIT_ACCOUNT_MAX: "10",
      RATE_LIMIT_ACCOUNT_DELAY_AFTER: "5",
      RATE_LIMIT_ACCOUNT_DELAY_MS: "1",
      RATE_LIMIT_ACCOUNT_DELAY_MAX_MS: "4",
    });
    const { body } = await signUp(k.app);
    const statuses = await flood(40, 10, (i) => signIn(k, { email: body.email, password: `guess-${i}` }, ipOf(i)));
    expect(tally(statuses)).toEqual({ 401: 40 });
    expect((await signIn(k, body, ipOf(5_000))).status).toBe(200);
    const delays = k.logs.filter((l) => l.includes("delayed: recent failed attempts")).map((l) => JSON.parse(l).delayMs);
    expect(Math.max(...delays)).toBe(4);
  });

  it("lets at most the address quota through from one address trying 1,000 accounts", async () => {
    const k = await kit({ RATE_LIMIT_IP_MAX: "20", RATE_LIMIT_IP_WINDOW_MS: "900000" });
    const { body } = await signUp(k.app);
    const statuses = await flood(1_000, 50, (i) => signIn(k, { email: `victim${i}@example.com`, password: "Winter2026!" }, "198.51.100.9"));
    const counts = tally(statuses);
    process.stdout.write(`stuffing 1000 accounts from one address: ${JSON.stringify(counts)}\n`);
    expect(counts[401]).toBe(20);
    expect(counts[429]).toBe(980);
    // The real user, from their own address, is not affected.
    expect((await signIn(k, body, "198.51.100.10")).status).toBe(200);
  });
});

describe("a failing rate limit store", () => {
  it("fails open: requests pass without limits (never a 500) and one warning is logged", async () => {
    const broken: RateLimitRedis = {
      sendCommand: () => Promise.reject(new Error("connect ECONNREFUSED 127.0.0.1:6379")),
      close: async () => undefined,
    };
    const k = await kit({ RATE_LIMIT_IP_MAX: "2", RATE_LIMIT_ACCOUNT_MAX: "2" }, undefined, { rateLimitRedis: broken });
    const { body } = await signUp(k.app);
    const statuses = await flood(6, 1, () => signIn(k, { email: body.email, password: "wrong password" }, "192.0.2.1"));
    expect(statuses).toEqual([401, 401, 401, 401, 401, 401]);
    expect((await signIn(k, body, "192.0.2.1")).status).toBe(200);
    expect(k.logs.filter((l) => l.includes("rate limit store failed"))).toHaveLength(1);
    expect(k.rateLimits.store).toBe("redis");
  });
});
