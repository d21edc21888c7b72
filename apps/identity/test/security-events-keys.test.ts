import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { JWT_LIFETIME_SECONDS } from "@app/contracts";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KeySet, ROTATION_SKEW_MS } from "../src/services/key-set.js";
import { frozenClock, identityKit, type Kit, SECRET } from "./kit.js";

// Signing keys in the security event log: every key made (first start, `pnpm keys:rotate`, the
// KEY_ROTATION_DAYS interval, a changed AUTH_SECRET) and retired is a `key_rotated` event of no
// user, written in the key's transaction, naming the kid and never any key material.
const silent = pino({ level: "silent" });
const DAY = 24 * 60 * 60 * 1000;
const clock = frozenClock();
let kit: Kit & { database: { identityUrl: string } };

/** The key events, oldest first, less those whose ids `seen` holds. */
const keyEvents = async (seen: ReadonlySet<string> = new Set()) =>
  (await kit.db.prisma.authEvent.findMany({ where: { type: "key_rotated" }, orderBy: [{ createdAt: "asc" }, { id: "asc" }] }))
    .filter((e) => !seen.has(e.id))
    .map((e) => ({
      userId: e.userId,
      actorId: e.actorId,
      ip: e.ip,
      outcome: e.outcome,
      ...(e.detail as { kid?: string; step?: string; reason?: string }),
    }));
/** The ids of the key events so far. */
const seenIds = async () => new Set((await kit.db.prisma.authEvent.findMany({ where: { type: "key_rotated" } })).map((e) => e.id));

beforeAll(async () => {
  kit = await identityKit({ now: clock.now });
});
afterAll(async () => {
  await kit?.close();
});

describe("signing keys in the security event log", () => {
  it("records the first key, a rotation, an interval rotation and retirements, each with its kid only", async () => {
    const first = (await kit.service.keys.view()).signing;
    clock.advance(1_000);
    const rotated = await kit.service.keys.rotate();
    clock.advance(40 * DAY);
    const interval = await kit.service.keys.rotateIfDue(30 * DAY);
    expect(interval).toBeDefined();
    // Past every overlap: the two older keys are retired.
    clock.advance(JWT_LIFETIME_SECONDS * 1000 + ROTATION_SKEW_MS + DAY);
    expect(await kit.service.keys.retireExpired()).toBe(2);
    const none = { userId: null, actorId: null, ip: null, outcome: "success" };
    const events = await keyEvents();
    expect(events.slice(0, 3)).toEqual([
      { ...none, kid: first.kid, step: "created", reason: "first_key" },
      { ...none, kid: rotated.kid, step: "created", reason: "manual" },
      { ...none, kid: interval?.kid, step: "created", reason: "interval" },
    ]);
    expect(events.slice(3).sort((a, b) => String(a.kid).localeCompare(String(b.kid)))).toEqual(
      [first.kid, rotated.kid].sort().map((kid) => ({ ...none, kid, step: "retired", reason: "overlap_passed" })),
    );
    // Key material never: no PEM, no private or public key parts.
    const written = JSON.stringify(await kit.db.prisma.authEvent.findMany({ where: { type: "key_rotated" } }));
    expect(written).not.toMatch(/PRIVATE|"x"|"d"|BEGIN/);
  });

  it("records the keys a changed AUTH_SECRET retires and the key made in their place", async () => {
    const before = await seenIds();
    const other = new KeySet({ prisma: kit.db.prisma, authSecret: `${SECRET}-changed`, logger: silent, now: clock.now });
    const made = (await other.view()).signing;
    const added = await keyEvents(before);
    expect(added.filter((e) => e.step === "created")).toEqual([expect.objectContaining({ kid: made.kid, reason: "secret_changed" })]);
    expect(added.filter((e) => e.step === "retired").length).toBeGreaterThan(0);
    expect(added.filter((e) => e.step === "retired").every((e) => e.reason === "secret_changed")).toBe(true);
  });

  it("records the rotation `pnpm keys:rotate` makes", async () => {
    const before = await seenIds();
    // The built CLI, as `pnpm keys:rotate` runs it.
    const cli = fileURLToPath(new URL("../dist/cli/rotate-keys.js", import.meta.url));
    const { stdout } = await promisify(execFile)(process.execPath, [cli], {
      env: { PATH: process.env.PATH ?? "", DATABASE_URL: kit.database.identityUrl, AUTH_SECRET: `${SECRET}-changed`, LOG_LEVEL: "warn" },
    });
    const kid = /new signing key (\S+):/.exec(stdout)?.[1];
    expect(kid).toBeTruthy();
    const added = await keyEvents(before);
    expect(added).toContainEqual(expect.objectContaining({ kid, step: "created", reason: "manual" }));
  });
});
