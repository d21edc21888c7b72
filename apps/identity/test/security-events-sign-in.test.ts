import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { identityKit, sessionCookie } from "./kit.js";
import { AGENT, eventsOf, expectFromRequest, oneEvent, secretOf, send, storedSince, webhooks } from "./security-events-kit.js";

// Sign-up, sign-in (and its refusals) and sign-out through HTTP on real PostgreSQL: each writes
// its security event and webhook message (docs/operations.md), with the request's IP and user
// agent and never a password, cookie or the address of an unknown account.

const PASSWORD = "correct horse battery";
let kit: Awaited<ReturnType<typeof identityKit>>;
let n = 0;
const address = (label: string) => `se-${label}-${++n}-${Date.now()}@example.com`;

beforeAll(async () => {
  kit = await identityKit();
});
afterAll(async () => {
  await kit?.close();
});

async function signUp(email = address("user")) {
  const res = await send(kit.app, "post", "/api/auth/sign-up/email", { email, password: PASSWORD, name: "Events" });
  expect(res.status, res.text).toBe(200);
  return { email, user: res.body.user as { id: string }, cookie: sessionCookie(res) ?? "", session: res.body.session as { id: string } };
}

const signIn = (email: string, password = PASSWORD) => send(kit.app, "post", "/api/auth/sign-in/email", { email, password });

describe("sign-up", () => {
  it("records sign_up and the sign-in it opens, with user.created and session.created webhooks and no secret", async () => {
    const since = new Date();
    const { email, user, cookie, session } = await signUp();
    const [signedUp, signedIn] = [await oneEvent(kit.db.prisma, user.id, "sign_up"), await oneEvent(kit.db.prisma, user.id, "sign_in")];
    for (const event of [signedUp, signedIn]) {
      expectFromRequest(event);
      expect(event).toMatchObject({ method: "password", actorId: null });
    }
    const row = await kit.db.prisma.session.findUniqueOrThrow({ where: { id: session.id } });
    expect(signedIn.ip).toBe(row.ipAddress);

    const [created] = await webhooks(kit.db.prisma, "user.created", { id: user.id });
    expect(created).toMatchObject({ id: user.id, email, name: "Events", emailVerified: false });
    expect(Date.parse(String(created?.createdAt))).not.toBeNaN();
    const [opened] = await webhooks(kit.db.prisma, "session.created", { userId: user.id });
    expect(opened).toEqual({
      id: session.id,
      userId: user.id,
      ipAddress: row.ipAddress,
      userAgent: AGENT,
      createdAt: row.createdAt.toISOString(),
      expiresAt: row.expiresAt.toISOString(),
    });

    const stored = await storedSince(kit.db.prisma, since);
    expect(stored).not.toContain(PASSWORD);
    expect(stored).not.toContain(secretOf(cookie));
    expect(stored).not.toContain("password_hash");
  });

  it("records nothing for a sign-up that fails: a taken address (409) writes no event or webhook", async () => {
    const { email } = await signUp();
    const before = { events: await kit.db.prisma.authEvent.count(), messages: await kit.db.prisma.webhookMessage.count() };
    const again = await send(kit.app, "post", "/api/auth/sign-up/email", { email, password: PASSWORD, name: "Again" });
    expect([again.status, again.body.code]).toEqual([409, "email_taken"]);
    expect({ events: await kit.db.prisma.authEvent.count(), messages: await kit.db.prisma.webhookMessage.count() }).toEqual(before);
  });
});

describe("sign-in with the password", () => {
  it("records sign_in with the session's facts and a session.created webhook without the cookie's secret", async () => {
    const { email, user } = await signUp();
    const since = new Date();
    const res = await signIn(email).expect(200);
    const events = await eventsOf(kit.db.prisma, user.id, ["sign_in"]);
    expect(events).toHaveLength(2);
    const last = events.at(-1);
    if (!last) throw new Error("no sign_in event");
    expectFromRequest(last);
    expect(last.method).toBe("password");
    expect(last.detail).toBeNull();
    const [opened] = await webhooks(kit.db.prisma, "session.created", { id: res.body.session.id });
    expect(opened).toMatchObject({ userId: user.id, userAgent: AGENT });
    expect(await storedSince(kit.db.prisma, since)).not.toContain(secretOf(sessionCookie(res) ?? ""));
  });

  it("records a wrong password against its account, and an unknown address against nobody, alike and with the same statements", async () => {
    const { email, user } = await signUp();
    const unknown = address("nobody");
    const since = new Date();
    const statements = async (who: string) => {
      const before = kit.db.queryCount();
      await signIn(who, "a wrong password").expect(401);
      return kit.db.queryCount() - before;
    };
    const counts = { wrong: await statements(email), unknown: await statements(unknown) };
    expect(counts.unknown).toBe(counts.wrong);

    const wrong = await oneEvent(kit.db.prisma, user.id, "sign_in_failed");
    expectFromRequest(wrong, "failure");
    expect(wrong).toMatchObject({ method: "password", detail: { reason: "invalid_credentials" } });
    const nobody = (await eventsOf(kit.db.prisma, null, ["sign_in_failed"])).filter((e) => e.createdAt >= since);
    expect(nobody).toHaveLength(1);
    expect(nobody[0]).toMatchObject({ userId: null, method: "password", outcome: "failure", detail: { reason: "invalid_credentials" } });
    // Nothing about the unknown address, nor the passwords tried, is stored anywhere.
    const stored = await storedSince(kit.db.prisma, since);
    for (const secret of [unknown, unknown.split("@")[0] ?? "", "a wrong password"]) expect(stored).not.toContain(secret);
    expect(await kit.db.prisma.user.count({ where: { email: unknown } })).toBe(0);
  });

  it("records a banned user's refusal with its reason, and no session", async () => {
    const { email, user } = await signUp();
    await kit.db.prisma.user.update({ where: { id: user.id }, data: { banned: true } });
    const res = await signIn(email);
    expect([res.status, res.body.code]).toEqual([403, "banned"]);
    const refused = await oneEvent(kit.db.prisma, user.id, "sign_in_failed");
    expect(refused).toMatchObject({ method: "password", outcome: "failure", detail: { reason: "banned" } });
    expect(await eventsOf(kit.db.prisma, user.id, ["sign_in"])).toHaveLength(1);
  });
});

describe("sign-out", () => {
  it("records sign_out and a session.revoked webhook with the session's id and reason", async () => {
    const { user, cookie, session } = await signUp();
    await send(kit.app, "post", "/api/auth/sign-out", {}, cookie).expect(200);
    expectFromRequest(await oneEvent(kit.db.prisma, user.id, "sign_out"));
    expect(await webhooks(kit.db.prisma, "session.revoked", { userId: user.id })).toEqual([
      { id: session.id, userId: user.id, reason: "sign_out" },
    ]);
    // Signing out again (the cookie names no session now) records nothing more.
    await send(kit.app, "post", "/api/auth/sign-out", {}, cookie).expect(200);
    expect(await eventsOf(kit.db.prisma, user.id, ["sign_out"])).toHaveLength(1);
  });
});

describe("with REQUIRE_EMAIL_VERIFICATION", () => {
  it("records sign_up for a new address only, and an unverified sign-in as refused", async () => {
    const verified = await identityKit({ database: kit.database, env: { REQUIRE_EMAIL_VERIFICATION: "true" } });
    try {
      const email = address("verify");
      const body = { email, password: PASSWORD, name: "New" };
      await send(verified.app, "post", "/api/auth/sign-up/email", body).expect(200);
      await send(verified.app, "post", "/api/auth/sign-up/email", { ...body, name: "Taken" }).expect(200);
      const user = await kit.db.prisma.user.findUniqueOrThrow({ where: { email } });
      expect((await eventsOf(kit.db.prisma, user.id)).map((e) => e.type)).toEqual(["sign_up"]);
      expect(await webhooks(kit.db.prisma, "user.created", { email })).toHaveLength(1);
      const res = await send(verified.app, "post", "/api/auth/sign-in/email", { email, password: PASSWORD });
      expect([res.status, res.body.code]).toEqual([403, "email_not_verified"]);
      const refused = await oneEvent(kit.db.prisma, user.id, "sign_in_failed");
      expect(refused).toMatchObject({ method: "password", detail: { reason: "email_not_verified" } });
    } finally {
      await verified.close();
    }
  });
});
