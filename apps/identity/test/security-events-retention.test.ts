import { randomUUID } from "node:crypto";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runHousekeeping } from "../src/housekeeping.js";
import { EventRetention, SWEEP_BATCH } from "../src/security-events/retention.js";
import { frozenClock, identityKit, type Kit } from "./kit.js";

// AUTH_EVENT_RETENTION_DAYS on a real database: the housekeeping round deletes the events older
// than the retention, in batches (each its own short statement), and nothing younger.
const DAY = 24 * 60 * 60 * 1000;
const silent = pino({ level: "silent" });
const clock = frozenClock();
let kit: Kit;

/** Inserts `count` events `ageMs` old (by the frozen clock) in one statement; returns their user id. */
async function events(count: number, ageMs: number): Promise<string> {
  const userId = randomUUID();
  await kit.db.pool.query(
    `INSERT INTO auth_event (id, type, user_id, outcome, created_at)
     SELECT gen_random_uuid()::text, 'sign_in', $1, 'success', $2::timestamptz - (n || ' milliseconds')::interval
     FROM generate_series(1, $3) AS n`,
    [userId, new Date(clock.now() - ageMs), count],
  );
  return userId;
}

const countOf = async (userId: string) => kit.db.prisma.authEvent.count({ where: { userId } });

beforeAll(async () => {
  kit = await identityKit({ now: clock.now, env: { AUTH_EVENT_RETENTION_DAYS: "30" } });
});
afterAll(async () => {
  await kit?.close();
});

describe("security event retention", () => {
  it("reads AUTH_EVENT_RETENTION_DAYS into the retention the sweep uses", () => {
    expect(kit.config.operations.eventRetentionMs).toBe(30 * DAY);
  });

  it("a housekeeping round deletes the events past the retention and keeps the rest", async () => {
    const old = await events(25, 31 * DAY);
    const edge = await events(3, 30 * DAY - 60_000);
    const fresh = await events(4, DAY);
    const retention = new EventRetention({ prisma: kit.db.prisma, retentionMs: kit.config.operations.eventRetentionMs, now: clock.now });
    const round = await runHousekeeping(kit.service, { logger: silent, keyRotationMs: 0, events: retention });
    expect(round.purgedEvents).toBe(25);
    expect([await countOf(old), await countOf(edge), await countOf(fresh)]).toEqual([0, 3, 4]);
    // The clock moves on: the edge's events pass the retention on the next round.
    clock.advance(2 * 60_000);
    expect((await runHousekeeping(kit.service, { logger: silent, keyRotationMs: 0, events: retention })).purgedEvents).toBe(3);
    expect(await countOf(fresh)).toBe(4);
  });

  it("deletes a backlog in batches, at most a round's worth at a time, oldest first", async () => {
    const backlog = await events(95, 40 * DAY);
    const retention = new EventRetention({ prisma: kit.db.prisma, retentionMs: 30 * DAY, now: clock.now, batch: 20, maxBatches: 3 });
    const before = kit.db.queryCount();
    expect(await retention.sweepExpired()).toBe(60);
    // One statement per batch, each deleting at most `batch` rows.
    expect(kit.db.queryCount() - before).toBe(3);
    expect(await countOf(backlog)).toBe(35);
    // The oldest went first: what is left is the youngest of the backlog.
    const left = await kit.db.prisma.authEvent.findMany({ where: { userId: backlog }, orderBy: { createdAt: "asc" }, take: 1 });
    const newest = await kit.db.prisma.authEvent.findFirst({ where: { userId: backlog }, orderBy: { createdAt: "desc" } });
    expect(newest && left[0] && newest.createdAt.getTime() - left[0].createdAt.getTime()).toBe(34);
    expect(await retention.sweepExpired()).toBe(35);
    expect(await retention.sweepExpired()).toBe(0);
  });

  it(`sweeps a large backlog (${4 * SWEEP_BATCH + 1} events) in batches of ${SWEEP_BATCH}`, async () => {
    const backlog = await events(4 * SWEEP_BATCH + 1, 60 * DAY);
    const retention = new EventRetention({ prisma: kit.db.prisma, retentionMs: 30 * DAY, now: clock.now });
    const before = kit.db.queryCount();
    expect(await retention.sweepExpired()).toBe(4 * SWEEP_BATCH + 1);
    expect(kit.db.queryCount() - before).toBe(5);
    expect(await countOf(backlog)).toBe(0);
  });
});
