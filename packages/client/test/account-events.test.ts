import type { AccountEventsResponse, AdminEventsResponse, SecurityEventType } from "@app/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AppClient, createClient, type FetchLike, memoryStorage } from "../src/index.js";
import { cookieFetch, freshEmail, grantRole, rejection, signInSignedIn, signUpSignedIn, startStack } from "./helpers.js";

// The security event log through the SDK (client.auth.events) against a real stack on
// PostgreSQL: the user's own events as identity recorded them, the admins' filters, and every
// refusal as an ApiError with its status and code.
const PASSWORD = "correct horse battery";
/** The keys the issue names for an item of GET /api/auth/account-events, plus `method` and `detail` where set. */
const ITEM_KEYS = ["id", "type", "createdAt", "ip", "userAgent", "outcome", "actorId", "method", "detail"];

let env: Awaited<ReturnType<typeof startStack>>;
beforeAll(async () => {
  env = await startStack();
});
afterAll(async () => {
  await env?.stop();
});

/** A browser of its own (cookie jar and storage) that sends `agent` as its User-Agent. */
function browser(agent = "client-test/1.0 (account events)"): AppClient {
  const jar = cookieFetch();
  const withAgent: FetchLike = (input, init = {}) => {
    const headers = new Headers(init.headers);
    headers.set("user-agent", agent);
    return jar.fetch(input, { ...init, headers });
  };
  return createClient({ baseUrl: env.stack.baseUrl, storage: memoryStorage(), fetch: withAgent });
}

async function signedUp(prefix: string, agent?: string) {
  const client = browser(agent);
  const email = freshEmail(prefix);
  const { user } = await signUpSignedIn(client, { email, password: PASSWORD, name: `${prefix} person` });
  return { client, email, id: user.id };
}

async function admin() {
  const a = await signedUp("events-admin");
  await grantRole(env.database.url, a.id, "admin");
  return a;
}

/** Every page of a listing, following `nextCursor` until null. */
async function allPages<E extends AccountEventsResponse["events"][number] | AdminEventsResponse["events"][number]>(
  page: (cursor: string | undefined) => Promise<{ events: E[]; nextCursor: string | null }>,
): Promise<E[]> {
  const events: E[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 50; pages += 1) {
    const next = await page(cursor);
    events.push(...next.events);
    if (next.nextCursor === null) return events;
    cursor = next.nextCursor;
  }
  throw new Error("more than 50 pages");
}

/** The types of some events, sorted (events of one moment have no fixed order among themselves). */
function typesOf(events: readonly { type: SecurityEventType }[]): SecurityEventType[] {
  return events.map((e) => e.type).sort();
}

describe("client.auth.events.list", () => {
  it("answers the user's own events newest first, each {id, type, createdAt, ip, userAgent, outcome}, never another's", async () => {
    const agent = "client-test/2.0 (own events)";
    const me = await signedUp("events-own", agent);
    const other = await signedUp("events-other");
    await expect(browser(agent).auth.signIn({ email: me.email, password: "not the password" })).rejects.toMatchObject({
      status: 401,
    });
    await signInSignedIn(browser(agent), { email: me.email, password: PASSWORD });

    const page = await me.client.auth.events.list();
    expect(Object.keys(page).sort()).toEqual(["events", "nextCursor"]);
    expect(page.nextCursor).toBeNull();
    // Sign-up records sign_up and the sign_in of its session (possibly in the same millisecond).
    expect(page.events.slice(0, 2).map((e) => e.type)).toEqual<SecurityEventType[]>(["sign_in", "sign_in_failed"]);
    expect(typesOf(page.events.slice(2))).toEqual<SecurityEventType[]>(["sign_in", "sign_up"]);
    expect(page.events.map((e) => e.outcome)).toEqual(["success", "failure", "success", "success"]);
    const times = page.events.map((e) => Date.parse(e.createdAt));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    for (const event of page.events) {
      expect(ITEM_KEYS).toEqual(expect.arrayContaining(Object.keys(event)));
      expect(event.userAgent).toBe(agent);
      expect(event.ip).toMatch(/127\.0\.0\.1|::1/);
      expect(event.actorId).toBeUndefined();
      expect(new Date(event.createdAt).toISOString()).toBe(event.createdAt);
    }
    // The failure says why and how, never what was tried.
    const failed = page.events[1];
    expect(failed).toMatchObject({ method: "password" });
    expect(JSON.stringify(page)).not.toContain("not the password");
    expect(JSON.stringify(page)).not.toContain(me.email);

    const theirs = await other.client.auth.events.list();
    expect(typesOf(theirs.events)).toEqual(["sign_in", "sign_up"]);
    expect(theirs.events.map((e) => e.id)).not.toContain(page.events[0]?.id);
  });

  it("pages with limit and nextCursor: every event once, in order, the last page's cursor null", async () => {
    const me = await signedUp("events-pages");
    for (let i = 0; i < 4; i += 1) await signInSignedIn(browser(), { email: me.email, password: PASSWORD });
    const whole = await me.client.auth.events.list({ limit: 100 });
    expect(whole.events).toHaveLength(6);
    expect(whole.nextCursor).toBeNull();

    const first = await me.client.auth.events.list({ limit: 2 });
    expect(first.events).toHaveLength(2);
    expect(first.nextCursor).toEqual(expect.any(String));
    const paged = await allPages((cursor) => me.client.auth.events.list({ cursor, limit: 2 }));
    expect(paged.map((e) => e.id)).toEqual(whole.events.map((e) => e.id));
    // null and "" mean the first page, as the SDK's type allows.
    expect((await me.client.auth.events.list({ cursor: null, limit: 2 })).events).toEqual(first.events);
  });

  it("refuses a cursor it did not make (400 bad_request), a limit out of range (400), and a signed-out caller (401)", async () => {
    const me = await signedUp("events-bad");
    const outOfRange = Buffer.from('["0000-01-01T00:00:00.000Z","a"]').toString("base64url");
    for (const cursor of ["not-a-cursor", "!!!", Buffer.from('["2026-01-01T00:00:00.000Z","x y"]').toString("base64url"), outOfRange]) {
      const error = await rejection(me.client.auth.events.list({ cursor }));
      expect({ cursor, status: error.status, code: error.code }).toEqual({ cursor, status: 400, code: "bad_request" });
    }
    for (const limit of [0, 101, 1.5]) {
      const error = await rejection(me.client.auth.events.list({ limit }));
      expect({ limit, status: error.status }).toEqual({ limit, status: 400 });
      expect(error.code).toMatch(/^(bad_request|validation_failed)$/);
    }
    const error = await rejection(browser().auth.events.list());
    expect(error).toMatchObject({ status: 401, code: "unauthorized" });
  });
});

describe("client.auth.events.adminList", () => {
  it("is refused to a non-admin with 403 forbidden, and to a signed-out caller with 401", async () => {
    const plain = await signedUp("events-plain");
    const refused = await rejection(plain.client.auth.events.adminList());
    expect(refused).toMatchObject({ status: 403, code: "forbidden" });
    expect(await rejection(browser().auth.events.adminList())).toMatchObject({ status: 401, code: "unauthorized" });
  });

  it("filters by user, type (one or several), outcome, acting admin, time and IP, each item naming its user", async () => {
    const boss = await admin();
    const target = await signedUp("events-target");
    await expect(browser().auth.signIn({ email: target.email, password: "wrong one" })).rejects.toMatchObject({ status: 401 });
    await boss.client.auth.admin.setRole({ userId: target.id, role: "admin" });
    await boss.client.auth.admin.setRole({ userId: target.id, role: "user" });

    const all = await allPages((cursor) => boss.client.auth.events.adminList({ userId: target.id, cursor, limit: 100 }));
    expect(all.slice(0, 3).map((e) => e.type)).toEqual(["role_changed", "role_changed", "sign_in_failed"]);
    expect(typesOf(all.slice(3))).toEqual(["sign_in", "sign_up"]);
    expect(new Set(all.map((e) => e.userId))).toEqual(new Set([target.id]));

    const roles = await boss.client.auth.events.adminList({ userId: target.id, type: "role_changed" });
    expect(roles.events).toHaveLength(2);
    for (const event of roles.events) expect(event).toMatchObject({ actorId: boss.id, userId: target.id, outcome: "success" });
    const byActor = await boss.client.auth.events.adminList({ actorId: boss.id });
    expect(byActor.events.map((e) => e.id).sort()).toEqual(roles.events.map((e) => e.id).sort());

    const several = await boss.client.auth.events.adminList({ userId: target.id, type: ["sign_up", "sign_in_failed"] });
    expect(several.events.map((e) => e.type)).toEqual(["sign_in_failed", "sign_up"]);
    expect(several.events.every((e) => e.userId === target.id)).toBe(true);
    const failures = await boss.client.auth.events.adminList({ userId: target.id, outcome: "failure" });
    expect(failures.events.map((e) => e.type)).toEqual(["sign_in_failed"]);

    // Time: `from` inclusive, `to` exclusive; a window before the account existed holds nothing of it.
    const signUp = all.find((e) => e.type === "sign_up");
    const atSignUp = await boss.client.auth.events.adminList({ userId: target.id, from: signUp?.createdAt, to: signUp?.createdAt });
    expect(atSignUp.events).toEqual([]);
    const fromSignUp = await boss.client.auth.events.adminList({ userId: target.id, from: signUp?.createdAt, limit: 100 });
    expect(fromSignUp.events.length).toBeGreaterThanOrEqual(4);
    expect(fromSignUp.events.map((e) => e.type)).toContain("sign_up");
    const before = await boss.client.auth.events.adminList({ userId: target.id, to: "2000-01-01" });
    expect(before.events).toEqual([]);
    const today = new Date().toISOString().slice(0, 10);
    expect((await boss.client.auth.events.adminList({ userId: target.id, from: today, to: today, limit: 100 })).events).toHaveLength(5);

    const ip = signUp?.ip ?? "";
    expect((await boss.client.auth.events.adminList({ userId: target.id, ip, limit: 100 })).events).toHaveLength(5);
    expect((await boss.client.auth.events.adminList({ userId: target.id, ip: "203.0.113.99" })).events).toEqual([]);

    // The target reads the admin's actions on its account, with the admin named.
    const own = await target.client.auth.events.list();
    expect(own.events.filter((e) => e.type === "role_changed").map((e) => e.actorId)).toEqual([boss.id, boss.id]);
  });

  it("records a failed sign-in for an unknown address under no user, without the address", async () => {
    const boss = await admin();
    const nobody = freshEmail("events-nobody");
    const unknown = await rejection(browser().auth.signIn({ email: nobody, password: "whatever it is" }));
    const known = await signedUp("events-known");
    const wrong = await rejection(browser().auth.signIn({ email: known.email, password: "whatever it is" }));
    // The caller cannot tell the two apart.
    expect({ status: unknown.status, code: unknown.code, message: unknown.message }).toEqual({
      status: wrong.status,
      code: wrong.code,
      message: wrong.message,
    });

    const failed = await boss.client.auth.events.adminList({ type: "sign_in_failed", outcome: "failure", limit: 100 });
    const anonymous = failed.events.filter((e) => e.userId === null);
    expect(anonymous.length).toBeGreaterThanOrEqual(1);
    expect(JSON.stringify(failed)).not.toContain(nobody);
    expect(JSON.stringify(failed)).not.toContain("whatever it is");
  });

  it("refuses a bad cursor (400 bad_request) and bad filters (400) with the SDK's ApiError", async () => {
    const boss = await admin();
    expect(await rejection(boss.client.auth.events.adminList({ cursor: "garbage" }))).toMatchObject({ status: 400, code: "bad_request" });
    const bad: object[] = [
      { type: "not_a_type" },
      { outcome: "maybe" },
      { from: "yesterday" },
      { to: "2026-13-45" },
      { limit: 1000 },
      { userId: "u".repeat(101) },
      { from: "0000-01-01" },
      { from: "0001-01-01T00:00:00+05:00" },
    ];
    for (const filters of bad) {
      const error = await rejection(boss.client.auth.events.adminList(filters as Parameters<typeof boss.client.auth.events.adminList>[0]));
      expect({ filters, status: error.status }).toEqual({ filters, status: 400 });
    }
    // The last day a timestamp holds: its end is past the column's range, so it means "no upper bound".
    const untilTheEnd = await boss.client.auth.events.adminList({ to: "9999-12-31", limit: 1 });
    expect(untilTheEnd.events).toHaveLength(1);
  });
});
