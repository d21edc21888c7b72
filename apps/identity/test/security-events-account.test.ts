import { createDb } from "@app/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { identityKit, sessionCookie } from "./kit.js";
import { eventsOf, expectFromRequest, oneEvent, send, storedSince, webhooks } from "./security-events-kit.js";

// The signed-in user's own account changes through HTTP on real PostgreSQL: sessions revoked,
// password changed, profile updated, account deleted. Each writes its event and webhooks in the
// action's transaction: a failing action leaves neither, and a failing write undoes the action.

const PASSWORD = "correct horse battery";
let kit: Awaited<ReturnType<typeof identityKit>>;
let n = 0;

beforeAll(async () => {
  kit = await identityKit();
});
afterAll(async () => {
  await kit?.close();
});

/** A new user, signed in from `sessions` browsers (the first is the sign-up's). */
async function userWith(sessions = 1) {
  const email = `se-account-${++n}-${Date.now()}@example.com`;
  const res = await send(kit.app, "post", "/api/auth/sign-up/email", { email, password: PASSWORD, name: "Account" }).expect(200);
  const cookies = [sessionCookie(res) ?? ""];
  const ids = [res.body.session.id as string];
  for (let i = 1; i < sessions; i += 1) {
    const signedIn = await send(kit.app, "post", "/api/auth/sign-in/email", { email, password: PASSWORD }).expect(200);
    cookies.push(sessionCookie(signedIn) ?? "");
    ids.push(signedIn.body.session.id);
  }
  return { email, userId: res.body.user.id as string, cookies, ids };
}

const revoked = (userId: string) => webhooks(kit.db.prisma, "session.revoked", { userId });

describe("revoking sessions", () => {
  it("records one session_revoked per request with how many ended, and session.revoked for each", async () => {
    const { userId, cookies, ids } = await userWith(4);
    const [current = "", ...others] = cookies;
    await send(kit.app, "post", "/api/auth/revoke-session", { token: ids[1] }, current).expect(200);
    await send(kit.app, "post", "/api/auth/revoke-other-sessions", {}, current).expect(200);
    // An id that names no session of the user ends nothing and records nothing.
    await send(kit.app, "post", "/api/auth/revoke-session", { token: "no-such-session" }, current).expect(200);
    await send(kit.app, "post", "/api/auth/revoke-sessions", {}, current).expect(200);
    const events = await eventsOf(kit.db.prisma, userId, ["session_revoked"]);
    expect(events.map((e) => e.detail)).toEqual([{ count: 1 }, { count: 2 }, { count: 1 }]);
    for (const event of events) expectFromRequest(event);
    const sent = await revoked(userId);
    expect(sent.map((d) => d.reason)).toEqual(["revoked", "revoked", "revoked", "revoked"]);
    expect([sent[0]?.id, sent.at(-1)?.id]).toEqual([ids[1], ids[0]]);
    expect(sent.map((d) => d.id).sort()).toEqual([...ids].sort());
    for (const cookie of [current, ...others]) await send(kit.app, "post", "/api/auth/get-session", {}, cookie).expect(401);
  });
});

describe("change-password", () => {
  it("records password_changed, ends the other sessions with their webhooks, and stores no password", async () => {
    const { userId, cookies, ids } = await userWith(2);
    const since = new Date();
    const wrong = await send(
      kit.app,
      "post",
      "/api/auth/change-password",
      { currentPassword: "not it", newPassword: "next one 1" },
      cookies[0],
    );
    expect(wrong.status).toBe(400);
    expect(await eventsOf(kit.db.prisma, userId, ["password_changed"])).toEqual([]);
    const body = { currentPassword: PASSWORD, newPassword: "the next password 1", revokeOtherSessions: true };
    await send(kit.app, "post", "/api/auth/change-password", body, cookies[0]).expect(200);
    const changed = await oneEvent(kit.db.prisma, userId, "password_changed");
    expectFromRequest(changed);
    expect(changed.detail).toEqual({ sessionsEnded: 1 });
    expect(await revoked(userId)).toEqual([{ id: ids[1], userId, reason: "password_changed" }]);
    const stored = await storedSince(kit.db.prisma, since);
    for (const secret of [PASSWORD, "the next password 1", "not it"]) expect(stored).not.toContain(secret);
  });
});

describe("update-user", () => {
  it("sends user.updated with the public fields and records no security event", async () => {
    const { userId, cookies } = await userWith();
    const before = (await eventsOf(kit.db.prisma, userId)).length;
    await send(kit.app, "post", "/api/auth/update-user", { name: "Renamed" }, cookies[0]).expect(200);
    const [updated] = await webhooks(kit.db.prisma, "user.updated", { id: userId });
    expect(updated).toMatchObject({ id: userId, name: "Renamed", emailVerified: false, image: null, twoFactorEnabled: false });
    expect(Object.keys(updated ?? {}).sort()).toEqual([
      "createdAt",
      "email",
      "emailVerified",
      "id",
      "image",
      "name",
      "twoFactorEnabled",
      "updatedAt",
    ]);
    expect(await eventsOf(kit.db.prisma, userId)).toHaveLength(before);
  });
});

describe("delete-user", () => {
  it("records account_deleted with user.deleted and a session.revoked per session", async () => {
    const { userId, cookies, ids } = await userWith(2);
    await send(kit.app, "post", "/api/auth/delete-user", { password: PASSWORD }, cookies[0]).expect(200);
    const deleted = await oneEvent(kit.db.prisma, userId, "account_deleted");
    expectFromRequest(deleted);
    expect(deleted.method).toBe("password");
    expect(await webhooks(kit.db.prisma, "user.deleted", { id: userId })).toEqual([{ id: userId }]);
    expect((await revoked(userId)).map((d) => d.id).sort()).toEqual([...ids].sort());
  });

  it("commits the event with the action or neither: a failing webhook write undoes the deletion", async () => {
    const admin = createDb(kit.database.url, { max: 1 });
    const { userId, email, cookies } = await userWith();
    try {
      // The outbox refuses user.deleted, as a full disk or a lost connection would fail the write.
      await admin.prisma.$executeRawUnsafe(`CREATE FUNCTION se_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN IF NEW.type = 'user.deleted' THEN RAISE EXCEPTION 'refused by the test'; END IF; RETURN NEW; END $$`);
      await admin.prisma.$executeRawUnsafe(
        "CREATE TRIGGER se_refuse BEFORE INSERT ON webhook_message FOR EACH ROW EXECUTE FUNCTION se_refuse()",
      );
      const res = await send(kit.app, "post", "/api/auth/delete-user", { password: PASSWORD }, cookies[0]);
      expect(res.status).toBe(500);
      expect(await kit.db.prisma.user.findUniqueOrThrow({ where: { id: userId } })).toMatchObject({ email });
      expect(await kit.db.prisma.session.count({ where: { userId } })).toBe(1);
      expect(await eventsOf(kit.db.prisma, userId, ["account_deleted"])).toEqual([]);
      expect(await revoked(userId)).toEqual([]);
    } finally {
      await admin.prisma.$executeRawUnsafe("DROP TRIGGER IF EXISTS se_refuse ON webhook_message");
      await admin.prisma.$executeRawUnsafe("DROP FUNCTION IF EXISTS se_refuse()");
      await admin.close();
    }
    // With the outbox writable again, the same request deletes, and the event is there.
    await send(kit.app, "post", "/api/auth/delete-user", { password: PASSWORD }, cookies[0]).expect(200);
    await oneEvent(kit.db.prisma, userId, "account_deleted");
  });
});
