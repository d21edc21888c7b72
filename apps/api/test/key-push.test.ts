import { KEY_SET_CHANNEL } from "@app/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EVENT_BUS_APPLICATION_NAME } from "../src/events/bus.js";
import { eventually, startTestApi, type TestApi } from "./helpers.js";

// Key set push: the API keeps the contract's key set cache (10 min max age, 30 s cooldown), and a
// NOTIFY on `auth_key_set` (or a re-established LISTEN connection) refreshes it at once, so a
// replaced key stops verifying and the new one starts, without waiting for either timer.
let t: TestApi;
beforeAll(async () => {
  t = await startTestApi();
});
afterAll(async () => {
  await t?.close();
});

const status = async (token: string) => (await fetch(`${t.url}/api/me`, { headers: { authorization: `Bearer ${token}` } })).status;

async function replaceKey() {
  const u = await t.user();
  expect(await status(u.token)).toBe(200);
  const kid = await t.stub.replaceKey();
  const fresh = await t.stub.mint(u);
  // Without an announcement the cache decides: the old token still verifies, the new kid is
  // refused within the cooldown.
  expect(await status(u.token)).toBe(200);
  expect(await status(fresh)).toBe(401);
  return { old: u.token, fresh, kid };
}

describe("key set push", () => {
  it("refreshes the key set when identity announces a change on auth_key_set", async () => {
    const { old, fresh, kid } = await replaceKey();
    const payload = JSON.stringify({ event: "rotated", kids: [kid] });
    await t.db.prisma.$executeRaw`SELECT pg_notify(${KEY_SET_CHANNEL}, ${payload})`;
    await eventually(async () => (await status(fresh)) === 200);
    expect(await status(old)).toBe(401);
  });

  it("refreshes the key set when the LISTEN connection comes back (announcements may have been missed)", async () => {
    const { old, fresh } = await replaceKey();
    const database = new URL(t.config.databaseUrl).pathname.slice(1);
    const listeners = await t.db.prisma.$queryRaw<Array<{ pid: number }>>`
      SELECT pid FROM pg_stat_activity WHERE application_name = ${EVENT_BUS_APPLICATION_NAME} AND datname = ${database}`;
    expect(listeners).toHaveLength(1);
    await t.db.prisma.$queryRaw`SELECT pg_terminate_backend(${listeners[0]?.pid ?? 0}::int)`;
    await eventually(() => !t.api.bus.connected);
    await eventually(() => t.api.bus.connected, 10_000);
    await eventually(async () => (await status(fresh)) === 200);
    expect(await status(old)).toBe(401);
  });

  it("a malformed announcement still only triggers a refresh (never an error)", async () => {
    const { old, fresh } = await replaceKey();
    await t.db.prisma.$executeRaw`SELECT pg_notify(${KEY_SET_CHANNEL}, ${"not json"})`;
    await eventually(async () => (await status(fresh)) === 200);
    expect(await status(old)).toBe(401);
  });

  it("retries a refresh that failed after an announcement (identity announces before it answers)", async () => {
    const { old, fresh, kid } = await replaceKey();
    t.stub.failJwks(true);
    const calls = t.stub.calls.jwks;
    const payload = JSON.stringify({ event: "created", kids: [kid] });
    await t.db.prisma.$executeRaw`SELECT pg_notify(${KEY_SET_CHANNEL}, ${payload})`;
    await eventually(() => t.stub.calls.jwks > calls + 1);
    expect(await status(fresh)).toBe(401);
    t.stub.failJwks(false);
    await eventually(async () => (await status(fresh)) === 200, 10_000);
    expect(await status(old)).toBe(401);
  });
});
