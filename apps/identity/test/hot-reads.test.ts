import { type CountedDb, createCountedDb, createTestDatabase, type TestDatabase } from "@app/db/testing";
import { createLogger } from "@app/http-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KeySet } from "../src/services/key-set.js";
import { Sessions } from "../src/services/sessions.js";
import { frozenClock } from "./kit.js";

// get-session's two reads run as raw SQL (on the pg pool, or through Prisma's raw API without
// one). They must answer exactly what the Prisma model queries answered, in one statement each.
const SECRET = "hot-reads-secret-hot-reads-secret-0001";
const HOUR = 3600 * 1000;
const silent = createLogger({ name: "t", level: "silent" });
let database: TestDatabase;
let db: CountedDb;

beforeAll(async () => {
  database = await createTestDatabase();
  db = createCountedDb(database.url, { max: 3 });
});
afterAll(async () => {
  await db.close();
  await database.drop();
});

async function newUser(label: string) {
  return db.prisma.user.create({ data: { id: `u-${label}`, email: `${label}@example.com`, name: `User ${label}` } });
}

describe("Sessions.validate", () => {
  it.each([
    ["the pg pool", true],
    ["Prisma's raw API", false],
  ])("answers the session and user exactly as the Prisma model does, in one statement (%s)", async (label, withPool) => {
    const clock = frozenClock();
    const sessions = new Sessions({
      prisma: db.prisma,
      authSecret: SECRET,
      ...(withPool ? { pool: db.pool } : {}),
      ttlMs: 10 * HOUR,
      now: clock.now,
    });
    const user = await newUser(withPool ? "pool" : "prisma");
    const { token, session } = await sessions.create(user.id, { ipAddress: "127.0.0.1", userAgent: "test" });
    const before = db.queryCount();
    const active = await sessions.validate(token);
    if (withPool) expect(db.queryCount() - before).toBe(1);
    const model = await db.prisma.session.findUnique({ where: { id: session.id }, include: { user: true } });
    if (!model) throw new Error(`no session row (${label})`);
    const { user: modelUser, ...modelSession } = model;
    expect(active).toEqual({ session: modelSession, user: modelUser, refreshed: false });
    expect(active?.session.secretHash).toBeInstanceOf(Uint8Array);
  });

  it("refuses a wrong secret and an unknown id, deletes an expired row, slides a half-spent one", async () => {
    const clock = frozenClock();
    const sessions = new Sessions({ prisma: db.prisma, authSecret: SECRET, pool: db.pool, ttlMs: 10 * HOUR, now: clock.now });
    const user = await newUser("rules");
    const { token, session } = await sessions.create(user.id);
    const [id = "", secret = ""] = token.split(".");
    const other = `${secret.slice(0, -1)}${secret.endsWith("A") ? "B" : "A"}`;
    expect(await sessions.validate(`${id}.${other}`)).toBeUndefined();
    expect(await sessions.validate(`${"A".repeat(22)}.${secret}`)).toBeUndefined();

    clock.advance(6 * HOUR);
    const slid = await sessions.validate(token);
    expect(slid?.refreshed).toBe(true);
    expect(slid?.session.expiresAt.getTime()).toBe(clock.now() + 10 * HOUR);
    const row = await db.prisma.session.findUnique({ where: { id: session.id } });
    expect(row?.expiresAt.getTime()).toBe(clock.now() + 10 * HOUR);

    clock.advance(10 * HOUR);
    expect(await sessions.validate(token)).toBeUndefined();
    expect(await db.prisma.session.findUnique({ where: { id: session.id } })).toBeNull();
  });
});

describe("KeySet.view", () => {
  it("reads the live keys in one statement, the same way with and without the pool, never memoized", async () => {
    const clock = frozenClock();
    const viaPool = new KeySet({ prisma: db.prisma, pool: db.pool, authSecret: SECRET, logger: silent, now: clock.now });
    const viaPrisma = new KeySet({ prisma: db.prisma, authSecret: SECRET, logger: silent, now: clock.now });
    const first = await viaPool.view(); // creates the first key
    const before = db.queryCount();
    const again = await viaPool.view();
    expect(db.queryCount() - before).toBe(1);
    expect(again.signing.kid).toBe(first.signing.kid);

    clock.advance(1_000);
    const rotated = await viaPrisma.rotate();
    const [a, b] = [await viaPool.view(), await viaPrisma.view()];
    expect(a.published.map((k) => k.kid)).toEqual([rotated.kid, first.signing.kid]);
    expect(b.published.map((k) => k.kid)).toEqual(a.published.map((k) => k.kid));
    expect(a.signing.kid).toBe(first.signing.kid); // the new key waits for its activation delay

    await db.prisma.jwks.updateMany({ where: { id: first.signing.kid }, data: { retiredAt: new Date(clock.now()) } });
    const afterRetire = await viaPool.view(); // no memo: the retirement is seen at once
    expect(afterRetire.published.map((k) => k.kid)).toEqual([rotated.kid]);
    expect(afterRetire.signing.kid).toBe(rotated.kid);
  });
});
