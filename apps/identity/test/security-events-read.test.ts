import { randomUUID } from "node:crypto";
import { SECURITY_EVENTS_PAGE_SIZE, type SecurityEventType } from "@app/contracts";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EVENT_READ_LIMITS } from "../src/security-events/limits.js";
import { grantAdmin } from "./admin-kit.js";
import { identityKit, type Kit, ORIGIN } from "./kit.js";
import { refusals } from "./metrics-kit.js";

// GET /api/auth/account-events and GET /api/auth/admin/events on a real database: pages newest
// first by (created_at, id), an opaque cursor, only the caller's own events, the admins' filters.
type TestKit = Kit & { database: Parameters<typeof grantAdmin>[0] };
let kit: TestKit;
const COOKIE = "identity.session_token";
const BASE = Date.UTC(2026, 5, 1, 12, 0, 0);

/** A user made directly (no sign-up, so no event of its own) with a live session cookie. */
async function user(label: string): Promise<{ id: string; cookie: string }> {
  const id = randomUUID();
  await kit.db.prisma.user.create({ data: { id, email: `${label}-${id}@example.com`, name: label } });
  const { token } = await kit.service.sessions.create(id);
  return { id, cookie: `${COOKIE}=${token}` };
}

/** Writes events straight to auth_event, at `BASE + minutes` each. */
async function seed(
  rows: {
    userId: string | null;
    minute: number;
    type?: SecurityEventType;
    outcome?: "success" | "failure";
    ip?: string;
    actorId?: string;
    id?: string;
  }[],
): Promise<string[]> {
  const data = rows.map((row) => ({
    id: row.id ?? randomUUID(),
    type: row.type ?? "sign_in",
    userId: row.userId,
    actorId: row.actorId ?? null,
    ip: row.ip ?? "203.0.113.7",
    userAgent: "Mozilla/5.0 (X11; Linux x86_64) Firefox/133.0",
    outcome: row.outcome ?? "success",
    method: "password",
    createdAt: new Date(BASE + row.minute * 60_000),
  }));
  await kit.db.prisma.authEvent.createMany({ data });
  return data.map((d) => d.id);
}

const get = (path: string, cookie?: string) => {
  const req = request(kit.app).get(path).set("origin", ORIGIN);
  return cookie ? req.set("cookie", cookie) : req;
};

interface Listed {
  events: { id: string; type: string; createdAt: string; userId?: string | null; actorId?: string; ip: string | null }[];
  nextCursor: string | null;
}

/** Every page of `path` (with `?` or `&` for the cursor), followed to the end. */
async function all(path: string, cookie: string): Promise<{ pages: Listed[]; ids: string[] }> {
  const pages: Listed[] = [];
  let cursor: string | null = null;
  do {
    const sep = path.includes("?") ? "&" : "?";
    const res: request.Response = await get(cursor ? `${path}${sep}cursor=${encodeURIComponent(cursor)}` : path, cookie).expect(200);
    const page = res.body as Listed;
    pages.push(page);
    cursor = page.nextCursor;
  } while (cursor && pages.length < 50);
  return { pages, ids: pages.flatMap((p) => p.events.map((e) => e.id)) };
}

beforeAll(async () => {
  kit = (await identityKit()) as TestKit;
});
afterAll(async () => {
  await kit?.close();
});

describe("GET /api/auth/account-events", () => {
  it("pages the user's own events newest first, ties on time broken by id, each once, to a last page without cursor", async () => {
    const me = await user("pager");
    // 120 events, three to each minute: the page boundaries fall inside groups of equal times.
    const ids = await seed(Array.from({ length: 120 }, (_, i) => ({ userId: me.id, minute: Math.floor(i / 3) })));
    const { pages, ids: listed } = await all("/api/auth/account-events", me.cookie);
    expect(pages.map((p) => p.events.length)).toEqual([SECURITY_EVENTS_PAGE_SIZE, SECURITY_EVENTS_PAGE_SIZE, 20]);
    expect(pages.at(-1)?.nextCursor).toBeNull();
    expect(new Set(listed).size).toBe(120);
    expect(new Set(listed)).toEqual(new Set(ids));
    const events = pages.flatMap((p) => p.events);
    for (let i = 1; i < events.length; i += 1) {
      const [a, b] = [events[i - 1], events[i]];
      if (!a || !b) throw new Error("missing event");
      const order = a.createdAt === b.createdAt ? (a.id > b.id ? 1 : -1) : a.createdAt > b.createdAt ? 1 : -1;
      expect(order).toBe(1);
    }
    const hundred = await get("/api/auth/account-events?limit=100", me.cookie).expect(200);
    expect(hundred.body.events).toHaveLength(100);
    await get("/api/auth/account-events?limit=101", me.cookie).expect(400);
  });

  it("answers only the caller's events: never another user's, never those of no user", async () => {
    const [me, other] = [await user("own"), await user("other")];
    const mine = await seed([
      { userId: me.id, minute: 1, type: "sign_in" },
      { userId: me.id, minute: 2, type: "password_changed", actorId: other.id },
    ]);
    await seed([
      { userId: other.id, minute: 3 },
      { userId: null, minute: 4, type: "sign_in_failed", outcome: "failure" },
    ]);
    const res = await get("/api/auth/account-events", me.cookie).expect(200);
    expect(res.body.events.map((e: { id: string }) => e.id)).toEqual([...mine].reverse());
    const [changed, signedIn] = res.body.events;
    expect(changed).toMatchObject({
      type: "password_changed",
      actorId: other.id,
      outcome: "success",
      ip: "203.0.113.7",
      method: "password",
    });
    expect(changed).not.toHaveProperty("userId");
    expect(signedIn).not.toHaveProperty("actorId");
    expect(res.headers["cache-control"]).toBe("no-store");
  });

  it("refuses a malformed cursor with 400 bad_request, and answers 401 without a session", async () => {
    const me = await user("cursor");
    const bad = [
      "not a cursor!",
      Buffer.from("{}").toString("base64url"),
      Buffer.from(JSON.stringify(["yesterday", randomUUID()])).toString("base64url"),
      Buffer.from(JSON.stringify(["2026-06-01T12:00:00.000Z", "x\u0000y"])).toString("base64url"),
      Buffer.from(JSON.stringify(["2026-06-01T12:00:00.000Z"])).toString("base64url"),
      "%FF%FE",
    ];
    for (const cursor of bad) {
      const res = await get(`/api/auth/account-events?cursor=${encodeURIComponent(cursor)}`, me.cookie);
      expect(res.status, cursor).toBe(400);
      expect(res.body.error.code, cursor).toBe("bad_request");
    }
    await get("/api/auth/account-events").expect(401);
    await get("/api/auth/account-events", `${COOKIE}=nope.nope`).expect(401);
  });

  it("limits each user's reads per minute, with Retry-After, each refusal counted under its limiter", async () => {
    const me = await user("limited");
    const before = await refusals("account-events-user");
    expect(before, "the series exists at 0 from the start").toBeGreaterThanOrEqual(0);
    for (let i = 0; i < EVENT_READ_LIMITS.perUser; i += 1) await get("/api/auth/account-events?limit=1", me.cookie).expect(200);
    expect(await refusals("account-events-user")).toBe(before);
    const refused = await get("/api/auth/account-events?limit=1", me.cookie).expect(429);
    expect(refused.body.error.code).toBe("rate_limited");
    expect(Number(refused.headers["retry-after"])).toBeGreaterThan(0);
    expect(await refusals("account-events-user")).toBe((before ?? 0) + 1);
    // Another user is not held back by it.
    await get("/api/auth/account-events?limit=1", (await user("unhindered")).cookie).expect(200);
  });
});

describe("GET /api/auth/admin/events", () => {
  let admin: { id: string; cookie: string };
  let target: { id: string; cookie: string };
  let seeded: Record<string, string>;

  beforeAll(async () => {
    admin = await user("admin");
    target = await user("target");
    await grantAdmin(kit.database, admin.id);
    // A far-future day of its own, so these are the newest events of the database.
    const day = 60 * 24 * 400;
    const [a, b, c, d, e] = await seed([
      { userId: target.id, minute: day + 1, type: "sign_in", ip: "198.51.100.1" },
      { userId: target.id, minute: day + 2, type: "sign_in_failed", outcome: "failure", ip: "198.51.100.2" },
      { userId: null, minute: day + 3, type: "sign_in_failed", outcome: "failure", ip: "198.51.100.2" },
      { userId: null, minute: day + 4, type: "key_rotated", ip: "198.51.100.9" },
      { userId: target.id, minute: day + 60 * 24 + 5, type: "role_changed", actorId: admin.id, ip: "198.51.100.3" },
    ]);
    seeded = { a: a ?? "", b: b ?? "", c: c ?? "", d: d ?? "", e: e ?? "" };
  });

  const ids = async (query: string) => {
    const res = await get(`/api/auth/admin/events?${query}`, admin.cookie);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return (res.body as Listed).events.map((e) => e.id);
  };

  it("lists every user's events and those of no user, newest first, with the user's id", async () => {
    const res = await get("/api/auth/admin/events?limit=5", admin.cookie).expect(200);
    expect(res.body.events.map((e: { id: string }) => e.id)).toEqual(["e", "d", "c", "b", "a"].map((k) => seeded[k]));
    expect(res.body.events[1]).toMatchObject({ type: "key_rotated", userId: null });
    expect(res.body.events[0]).toMatchObject({ userId: target.id, actorId: admin.id });
    expect(res.body.nextCursor).toEqual(expect.any(String));
  });

  it("filters by user, one or several types, outcome, time, IP and acting admin, and pages within a filter", async () => {
    expect(await ids(`userId=${target.id}`)).toEqual(["e", "b", "a"].map((k) => seeded[k]));
    expect(await ids("type=key_rotated")).toContain(seeded.d);
    expect(await ids("type=key_rotated")).not.toContain(seeded.c);
    const several = await ids(`type=role_changed&type=key_rotated&limit=2`);
    expect(several).toEqual([seeded.e, seeded.d]);
    expect(await ids(`type=role_changed,sign_in&userId=${target.id}`)).toEqual([seeded.e, seeded.a]);
    expect(await ids(`outcome=failure&ip=198.51.100.2`)).toEqual([seeded.c, seeded.b]);
    expect(await ids(`actorId=${admin.id}`)).toEqual([seeded.e]);
    const day = new Date(BASE + 60_000 * 60 * 24 * 400).toISOString().slice(0, 10);
    // `to` as a date takes the whole day; as a date-time it is exclusive.
    expect(await ids(`from=${day}&to=${day}`)).toEqual(["d", "c", "b", "a"].map((k) => seeded[k]));
    const third = new Date(BASE + 60_000 * (60 * 24 * 400 + 3)).toISOString();
    expect(await ids(`from=${day}&to=${encodeURIComponent(third)}`)).toEqual([seeded.b, seeded.a]);
    expect(await ids(`from=${encodeURIComponent(third)}&userId=${target.id}`)).toEqual([seeded.e]);
    const first = await get(`/api/auth/admin/events?userId=${target.id}&limit=2`, admin.cookie).expect(200);
    const rest = await get(
      `/api/auth/admin/events?userId=${target.id}&limit=2&cursor=${encodeURIComponent(first.body.nextCursor)}`,
      admin.cookie,
    ).expect(200);
    expect(rest.body.events.map((e: { id: string }) => e.id)).toEqual([seeded.a]);
    expect(rest.body.nextCursor).toBeNull();
  });

  it("refuses unknown filters, types and dates with 400, a malformed cursor with bad_request", async () => {
    for (const query of ["type=sign_on", "from=yesterday", "outcome=maybe", "userid=x", `limit=0`]) {
      const res = await get(`/api/auth/admin/events?${query}`, admin.cookie);
      expect(res.status, query).toBe(400);
      expect(res.body.error.code, query).toBe("validation_failed");
    }
    const res = await get("/api/auth/admin/events?cursor=AAAA", admin.cookie).expect(400);
    expect(res.body.error.code).toBe("bad_request");
  });

  it("answers 403 to a user without the admin role and 401 without a session", async () => {
    const res = await get("/api/auth/admin/events", target.cookie).expect(403);
    expect(res.body.error.code).toBe("forbidden");
    await get("/api/auth/admin/events").expect(401);
  });
});
