import { KEY_SET_CHANNEL, type KeySetEvent, keySetEventSchema } from "@app/contracts";
import type { Db } from "@app/db";
import { createTestDatabase, type TestDatabase } from "@app/db/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_KEY_ACTIVATION_DELAY_MS, ROTATION_SKEW_MS } from "../src/services/key-set.js";
import { keySetPayload } from "../src/services/key-set-events.js";
import { frozenClock, identityKit, type Kit } from "./kit.js";

// Identity announces key set changes on PostgreSQL NOTIFY (docs/key-set-events.md); a listener on
// its own connection, as every API instance holds one, must receive each change once committed.
const FIRST = "first-secret-first-secret-first-secret-1";
const SECOND = "second-secret-second-secret-second-secr";

let database: TestDatabase;
const connectListener = (db: Db) => db.pool.connect();
let listener: Awaited<ReturnType<typeof connectListener>>;
let events: KeySetEvent[];
const open: Kit[] = [];

beforeEach(async () => {
  database = await createTestDatabase();
  const watcher = await identityKit({ database });
  open.push(watcher);
  events = [];
  listener = await connectListener(watcher.db);
  listener.on("notification", (message) => {
    if (message.channel === KEY_SET_CHANNEL) events.push(keySetEventSchema.parse(JSON.parse(message.payload ?? "")));
  });
  await listener.query(`LISTEN ${KEY_SET_CHANNEL}`);
});
afterEach(async () => {
  await listener.query(`UNLISTEN ${KEY_SET_CHANNEL}`);
  listener.release();
  await Promise.all(open.splice(0).map((k) => k.close()));
  await database.drop();
});

async function kit(env: Record<string, string> = {}, now?: () => number) {
  const k = await identityKit({ database, env, ...(now ? { now } : {}) });
  open.push(k);
  return k;
}

/** Waits until `count` events arrived (notifications are asynchronous to the committing client). */
async function received(count: number): Promise<KeySetEvent[]> {
  for (let i = 0; i < 200 && events.length < count; i += 1) await new Promise((r) => setTimeout(r, 10));
  return events.splice(0);
}

describe("key set events", () => {
  it("announces the first key (created), and a secret change (retired + created) with the kids only", async () => {
    const first = await kit({ AUTH_SECRET: FIRST });
    const oldKid = (await first.service.keys.view()).signing.kid;
    expect(await received(1)).toEqual([{ event: "created", kids: [oldKid] }]);

    const second = await kit({ AUTH_SECRET: SECOND });
    const newKid = (await second.service.keys.view()).signing.kid;
    const changed = await received(2);
    expect(changed).toContainEqual({ event: "retired", kids: [oldKid] });
    expect(changed).toContainEqual({ event: "created", kids: [newKid] });
    expect(changed.at(-1)).toEqual({ event: "created", kids: [newKid] });
  });

  it("announces a rotation (keys:rotate and the interval) and the retirement of a superseded key", async () => {
    const clock = frozenClock();
    const k = await kit({}, clock.now);
    const firstKid = (await k.service.keys.view()).signing.kid;
    await received(1);

    const rotated = await k.service.keys.rotate();
    expect(await received(1)).toEqual([{ event: "rotated", kids: [rotated.kid] }]);

    clock.advance(30 * 86_400_000);
    const due = await k.service.keys.rotateIfDue(86_400_000);
    expect(await received(1)).toEqual([{ event: "rotated", kids: [due?.kid] }]);

    clock.advance(DEFAULT_KEY_ACTIVATION_DELAY_MS + 30 * 86_400_000 + ROTATION_SKEW_MS + 1);
    const retired = await k.service.keys.retireExpired();
    expect(retired).toBe(2);
    const [event] = await received(1);
    expect(event?.event).toBe("retired");
    expect([...(event?.kids ?? [])].sort()).toEqual([firstKid, rotated.kid].sort());
  });

  it("announces nothing when nothing changed, and never key material", async () => {
    const k = await kit();
    await k.service.keys.view();
    await received(1);
    await k.service.keys.view();
    expect(await k.service.keys.retireExpired()).toBe(0);
    expect(await k.service.keys.rotateIfDue(0)).toBeUndefined();
    // A listener receives notifications in commit order: had the calls above announced anything,
    // it would arrive before this rotation's event.
    const rotated = await k.service.keys.rotate();
    expect(await received(1)).toEqual([{ event: "rotated", kids: [rotated.kid] }]);
    expect(keySetPayload("created", Array(500).fill("kid")).length).toBeLessThan(8000);
  });
});
