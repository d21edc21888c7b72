import { randomUUID } from "node:crypto";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { identityKit, type Kit } from "./kit.js";
import { type MailKit, mailKit } from "./mail-kit.js";

// The mail routes must not tell a stranger whether an address has an account, neither by their
// answer nor by their time (docs/accounts.md "No enumeration"): the request only writes outbox
// rows (services/mail-outbox.ts), the same kind of writes for a known and an unknown address, and
// the mail goes out later. The medians of known and unknown addresses must stay within a relative
// tolerance of each other; before the outbox, a known address waited for the SMTP server.

/** Interleaved pairs per comparison (after a warm-up): enough for stable medians on a busy machine. */
const ROUNDS = 40;
const WARM_UP = 6;
/**
 * Largest relative difference of the two medians: |a − b| / max(a, b). A known address that waits
 * for the mail server differs by far more; the bound leaves room for the suite's other files
 * sharing the machine's cores, which make single medians noisy.
 */
const TOLERANCE = 0.5;

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};

async function timed(run: () => Promise<request.Response>): Promise<{ ms: number; status: number }> {
  const start = performance.now();
  const res = await run();
  return { ms: performance.now() - start, status: res.status };
}

/**
 * Times `a(i)` and `b(i)` alternately (which goes first flips each round, so drift and warm caches
 * favour neither) and returns both medians and every status seen.
 */
async function compare(a: (i: number) => Promise<request.Response>, b: (i: number) => Promise<request.Response>, rounds = ROUNDS) {
  const times = { a: [] as number[], b: [] as number[] };
  const statuses = new Set<number>();
  for (let i = 0; i < WARM_UP + rounds; i += 1) {
    const order = i % 2 ? (["a", "b"] as const) : (["b", "a"] as const);
    for (const which of order) {
      const { ms, status } = await timed(() => (which === "a" ? a(i) : b(i)));
      statuses.add(status);
      if (i >= WARM_UP) times[which].push(ms);
    }
  }
  const result = { a: median(times.a), b: median(times.b), statuses: [...statuses] };
  return { ...result, relative: Math.abs(result.a - result.b) / Math.max(result.a, result.b) };
}

let kit: MailKit;
const tag = Date.now().toString(36);

/** `count` users inserted directly (no sign-up mail), each with a session cookie. */
async function users(prefix: string, count: number, verified = false, on: Kit = kit) {
  return Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const user = await on.db.prisma.user.create({
        data: { id: randomUUID(), email: `${prefix}${i}-${tag}@example.com`, name: `${prefix} ${i}`, emailVerified: verified },
      });
      const { token } = await on.service.sessions.create(user.id);
      return { user, cookie: `${on.config.cookieName}=${token}` };
    }),
  );
}

beforeAll(async () => {
  // Limits high enough that the comparison never meets a 429.
  kit = await mailKit({ env: { RATE_LIMIT_MAIL_IP_MAX: "100000", RATE_LIMIT_MAIL_ADDRESS_MAX: "100000", MAIL_BUDGET_PER_HOUR: "100000" } });
});
afterAll(async () => {
  await kit?.close();
});

describe("the mail routes take the same time whatever the address", () => {
  it("request-password-reset: a known address and an unknown one", { timeout: 180_000 }, async () => {
    const known = await users("reset", WARM_UP + ROUNDS);
    const result = await compare(
      (i) => request(kit.app).post("/api/auth/request-password-reset").send({ email: known[i]?.user.email }),
      (i) =>
        request(kit.app)
          .post("/api/auth/request-password-reset")
          .send({ email: `nobody${i}-${tag}@example.com` }),
    );
    console.info(`request-password-reset median: known ${result.a.toFixed(1)} ms, unknown ${result.b.toFixed(1)} ms`);
    expect(result.statuses).toEqual([200]);
    expect(result.relative).toBeLessThan(TOLERANCE);
  });

  it("send-verification-email: an unverified address, and unknown and verified ones", { timeout: 180_000 }, async () => {
    const unverified = await users("unverified", WARM_UP + ROUNDS);
    const verified = await users("verified", WARM_UP + ROUNDS, true);
    const send = (email: string | undefined) => request(kit.app).post("/api/auth/send-verification-email").send({ email });
    const unknown = await compare(
      (i) => send(unverified[i]?.user.email),
      (i) => send(`ghost${i}-${tag}@example.com`),
    );
    console.info(`send-verification-email median: unverified ${unknown.a.toFixed(1)} ms, unknown ${unknown.b.toFixed(1)} ms`);
    expect(unknown.statuses).toEqual([200]);
    expect(unknown.relative).toBeLessThan(TOLERANCE);
    await kit.db.prisma.verification.deleteMany({});
    const done = await compare(
      (i) => send(unverified[i]?.user.email),
      (i) => send(verified[i]?.user.email),
    );
    console.info(`send-verification-email median: unverified ${done.a.toFixed(1)} ms, verified ${done.b.toFixed(1)} ms`);
    expect(done.statuses).toEqual([200]);
    expect(done.relative).toBeLessThan(TOLERANCE);
  });

  it("change-email: a free address and one that is taken", { timeout: 180_000 }, async () => {
    const movers = await users("mover", 2 * (WARM_UP + ROUNDS));
    const owners = await users("owner", WARM_UP + ROUNDS);
    const change = (cookie: string | undefined, newEmail: string | undefined) =>
      request(kit.app)
        .post("/api/auth/change-email")
        .set("cookie", cookie ?? "")
        .send({ newEmail });
    const result = await compare(
      (i) => change(movers[2 * i]?.cookie, `free${i}-${tag}@example.com`),
      (i) => change(movers[2 * i + 1]?.cookie, owners[i]?.user.email),
    );
    console.info(`change-email median: free ${result.a.toFixed(1)} ms, taken ${result.b.toFixed(1)} ms`);
    expect(result.statuses).toEqual([200]);
    expect(result.relative).toBeLessThan(TOLERANCE);
  });
});

describe("verified sign-up takes the same time for a new and a taken address", () => {
  // Fewer rounds: each sign-up hashes a password (argon2), which dwarfs the mail's writes.
  const SIGN_UPS = 30;
  it("both hash the password, try the insert and queue their mail", { timeout: 300_000 }, async () => {
    const verified = await mailKit({
      env: { REQUIRE_EMAIL_VERIFICATION: "true", RATE_LIMIT_MAIL_IP_MAX: "100000", RATE_LIMIT_MAIL_ADDRESS_MAX: "100000" },
    });
    try {
      const owners = await users("taken", WARM_UP + SIGN_UPS, false, verified);
      const signUp = (email: string | undefined) =>
        request(verified.app).post("/api/auth/sign-up/email").send({ email, password: "correct horse battery", name: "Someone" });
      const result = await compare(
        (i) => signUp(`new${i}-${tag}@example.com`),
        (i) => signUp(owners[i]?.user.email),
        SIGN_UPS,
      );
      console.info(`verified sign-up median: new ${result.a.toFixed(1)} ms, taken ${result.b.toFixed(1)} ms`);
      expect(result.statuses).toEqual([200]);
      expect(result.relative).toBeLessThan(TOLERANCE);
      await verified.settled(30_000);
    } finally {
      await verified.close();
    }
  });
});

describe("the mail routes send PostgreSQL the same statements whatever the address", () => {
  it("a mail queued, an unknown or verified or taken address, a cool-down and an exhausted budget alike", async () => {
    // No worker here: only the requests' own statements are counted (the mailer is never used).
    const quiet = await identityKit({
      mailer: kit.mailer,
      env: { RATE_LIMIT_MAIL_IP_MAX: "100000", RATE_LIMIT_MAIL_ADDRESS_MAX: "100000", MAIL_BUDGET_PER_HOUR: "2" },
    });
    try {
      const statements = async (path: string, body: object, cookie = "") => {
        const before = quiet.db.queryCount();
        await request(quiet.app).post(`/api/auth/${path}`).set("cookie", cookie).send(body).expect(200);
        return quiet.db.queryCount() - before;
      };
      const one = async (prefix: string, isVerified = false) => {
        const [first] = await users(prefix, 1, isVerified, quiet);
        if (!first) throw new Error("no user made");
        return first;
      };
      const [known, verified, mover, owner] = [
        await one("count-known"),
        await one("count-verified", true),
        await one("count-mover"),
        await one("count-owner"),
      ];
      const reset = (email: string) => statements("request-password-reset", { email });
      const verify = (email: string) => statements("send-verification-email", { email });
      const counts = {
        queued: await reset(known.user.email),
        coolDown: await reset(known.user.email),
        unknown: await reset(`count-nobody-${tag}@example.com`),
        verifyQueued: await verify(known.user.email),
        verifyVerified: await verify(verified.user.email),
        verifyUnknown: await verify(`count-ghost-${tag}@example.com`),
        // The third mail to the address within the hour is over the budget of 2.
        overBudget: await reset(known.user.email),
      };
      expect(new Set(Object.values(counts)).size, JSON.stringify(counts)).toBe(1);
      const change = (newEmail: string) => statements("change-email", { newEmail }, mover.cookie);
      const free = await change(`count-free-${tag}@example.com`);
      expect(await change(owner.user.email)).toBe(free);
      // Both changes mail the mover's current address, free or taken (services/account-recovery.ts changeEmail).
      const states = await quiet.db.prisma.mailOutbox.groupBy({ by: ["state"], _count: true });
      expect(Object.fromEntries(states.map((s) => [s.state, s._count]))).toEqual({ pending: 4, skipped: 4, dropped: 1 });
    } finally {
      await quiet.close();
    }
  });
});
