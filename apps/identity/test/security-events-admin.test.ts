import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { grantAdmin } from "./admin-kit.js";
import { identityKit, type Kit, ORIGIN, sessionCookie, signUp } from "./kit.js";

// Every admin action (admin/) is a security event of the user it acts on, with the admin as its
// actor and the request's IP and user agent, written in the action's transaction with the
// webhook other systems get; neither ever holds a password, a cookie secret or a ban reason.
type TestKit = Kit & { database: Parameters<typeof grantAdmin>[0] };
let kit: TestKit;
let admin: { id: string; cookie: string };
const AGENT = "AdminConsole/1.0 (events test)";
const PASSWORD = "correct horse battery";
const SECRET_PASSWORD = "a very secret new password 77";
const BAN_REASON = "private note about spam 4242";

const post = (path: string, body: object, cookie = admin.cookie) =>
  request(kit.app).post(`/api/auth/admin/${path}`).set("origin", ORIGIN).set("user-agent", AGENT).set("cookie", cookie).send(body);

/** The user's events, oldest first. */
const eventsOf = (userId: string) =>
  kit.db.prisma.authEvent.findMany({ where: { userId }, orderBy: [{ createdAt: "asc" }, { id: "asc" }] });

/** `[type, …]` rows in a stable order: rows one transaction wrote share a time, so their order is the ids'. */
const sorted = <T>(rows: T[]) => [...rows].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));

/** The webhook messages whose data names the user (as `id` or `userId`), oldest first. */
async function webhooksOf(userId: string): Promise<{ type: string; data: Record<string, unknown> }[]> {
  const rows = await kit.db.prisma.webhookMessage.findMany({ orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
  return rows
    .map((row) => ({ type: row.type, data: (row.payload as { data: Record<string, unknown> }).data }))
    .filter(({ data }) => data.id === userId || data.userId === userId);
}

/** Asserts nothing secret was written about the user: no password, cookie secret or ban reason. */
async function expectNoSecrets(userId: string, cookies: string[]): Promise<void> {
  const written = JSON.stringify([await eventsOf(userId), await webhooksOf(userId)]);
  for (const secret of [PASSWORD, SECRET_PASSWORD, BAN_REASON, "passwordHash", ...cookies.map((c) => c.split(".")[1] ?? "")]) {
    expect(written).not.toContain(secret);
  }
}

beforeAll(async () => {
  kit = (await identityKit()) as TestKit;
  const signedUp = await signUp(kit.app, { password: PASSWORD });
  admin = { id: signedUp.user.id, cookie: signedUp.cookie };
  await grantAdmin(kit.database, admin.id);
});
afterAll(async () => {
  await kit?.close();
});

describe("admin actions in the security event log and webhooks", () => {
  it("create-user: sign_up by the admin and user.created; update-user: user.updated and the email change", async () => {
    const created = await post("create-user", { email: "made-by-admin@example.com", password: PASSWORD, name: "Made" }).expect(200);
    const userId = created.body.user.id as string;
    const [signUpEvent] = await eventsOf(userId);
    expect(signUpEvent).toMatchObject({ type: "sign_up", actorId: admin.id, outcome: "success", userAgent: AGENT });
    expect(signUpEvent?.ip).toMatch(/127\.0\.0\.1/);
    expect((await webhooksOf(userId)).map((w) => w.type)).toEqual(["user.created"]);
    expect((await webhooksOf(userId))[0]?.data).toMatchObject({ id: userId, email: "made-by-admin@example.com", name: "Made" });

    await post("update-user", { userId, data: { name: "Renamed" } }).expect(200);
    await post("update-user", { userId, data: { email: "moved-by-admin@example.com", emailVerified: true } }).expect(200);
    expect(sorted((await eventsOf(userId)).map((e) => [e.type, e.actorId]))).toEqual([
      ["email_changed", admin.id],
      ["email_verified", admin.id],
      ["sign_up", admin.id],
    ]);
    const hooks = await webhooksOf(userId);
    expect(hooks.map((w) => w.type)).toEqual(["user.created", "user.updated", "user.updated"]);
    expect(hooks.map((w) => w.data)).toContainEqual(
      expect.objectContaining({ email: "moved-by-admin@example.com", name: "Renamed", emailVerified: true }),
    );
    await expectNoSecrets(userId, []);
  });

  it("set-role: role_changed with the new role, once per change; set-user-password: password_changed, never the password", async () => {
    const { user } = await signUp(kit.app, { password: PASSWORD });
    const before = (await eventsOf(user.id)).length;
    await post("set-role", { userId: user.id, role: "admin" }).expect(200);
    await post("set-role", { userId: user.id, role: "admin" }).expect(200);
    await post("set-role", { userId: user.id, role: "user" }).expect(200);
    await post("set-user-password", { userId: user.id, newPassword: SECRET_PASSWORD }).expect(200);
    const added = (await eventsOf(user.id)).slice(before);
    expect(added.map((e) => [e.type, e.actorId, e.detail])).toEqual([
      ["role_changed", admin.id, { role: "admin" }],
      ["role_changed", admin.id, { role: "user" }],
      ["password_changed", admin.id, null],
    ]);
    await expectNoSecrets(user.id, []);
  });

  it("revoke-user-session(s): session_revoked by the admin and session.revoked per session", async () => {
    const { user, cookie } = await signUp(kit.app, { password: PASSWORD });
    const second = sessionCookie(
      await request(kit.app)
        .post("/api/auth/sign-in/email")
        .set("origin", ORIGIN)
        .send({ email: user.email, password: PASSWORD })
        .expect(200),
    );
    const third = sessionCookie(
      await request(kit.app)
        .post("/api/auth/sign-in/email")
        .set("origin", ORIGIN)
        .send({ email: user.email, password: PASSWORD })
        .expect(200),
    );
    const sessionId = (c: string | undefined) => c?.split("=")[1]?.split(".")[0] ?? "";
    await post("revoke-user-session", { sessionToken: sessionId(second) }).expect(200);
    // A session that is gone already ends nothing and records nothing.
    await post("revoke-user-session", { sessionToken: sessionId(second) }).expect(200);
    await post("revoke-user-sessions", { userId: user.id }).expect(200);
    await post("revoke-user-sessions", { userId: user.id }).expect(200);
    const revoked = (await eventsOf(user.id)).filter((e) => e.type === "session_revoked");
    expect(revoked.map((e) => [e.actorId, e.detail])).toEqual([
      [admin.id, { count: 1 }],
      [admin.id, { count: 2 }],
    ]);
    const hooks = (await webhooksOf(user.id)).filter((w) => w.type === "session.revoked");
    expect(hooks[0]?.data).toEqual({ id: sessionId(second), userId: user.id, reason: "admin_revoked" });
    expect(sorted(hooks.slice(1).map((w) => w.data))).toEqual(
      sorted([sessionId(cookie), sessionId(third)].map((id) => ({ id, userId: user.id, reason: "admin_revoked" }))),
    );
    await expectNoSecrets(user.id, [cookie, second ?? "", third ?? ""]);
  });

  it("ban-user and unban-user: user_banned (lifted false, then true) without the reason, the sessions' session.revoked, user.updated", async () => {
    const { user, cookie } = await signUp(kit.app, { password: PASSWORD });
    const start = (await webhooksOf(user.id)).length;
    await post("ban-user", { userId: user.id, banReason: BAN_REASON, banExpiresIn: 3600 }).expect(200);
    await post("unban-user", { userId: user.id }).expect(200);
    // Nothing to lift: nothing recorded.
    await post("unban-user", { userId: user.id }).expect(200);
    await post("update-user", { userId: user.id, data: { banned: true, banReason: BAN_REASON } }).expect(200);
    const bans = (await eventsOf(user.id)).filter((e) => e.type === "user_banned");
    expect(bans.map((e) => [e.actorId, e.detail])).toEqual([
      [admin.id, { lifted: false }],
      [admin.id, { lifted: true }],
      [admin.id, { lifted: false }],
    ]);
    const hooks = (await webhooksOf(user.id)).slice(start);
    expect(hooks.map((w) => w.type).sort()).toEqual(["session.revoked", "user.updated", "user.updated", "user.updated"]);
    const sessionOfCookie = cookie.split("=")[1]?.split(".")[0];
    expect(hooks.find((w) => w.type === "session.revoked")?.data).toEqual({ id: sessionOfCookie, userId: user.id, reason: "user_banned" });
    expect(hooks.filter((w) => w.type === "user.updated").map((w) => w.data.id)).toEqual([user.id, user.id, user.id]);
    await expectNoSecrets(user.id, [cookie]);
  });

  it("impersonation: started and stopped, on the user's log with the admin as actor, the session's end as session.revoked", async () => {
    const { user } = await signUp(kit.app, { password: PASSWORD });
    const started = await post("impersonate-user", { userId: user.id }).expect(200);
    const impersonation = sessionCookie(started);
    const saved = sessionCookie(started, "identity.admin_session");
    expect(impersonation && saved).toBeTruthy();
    await request(kit.app)
      .post("/api/auth/admin/stop-impersonating")
      .set("origin", ORIGIN)
      .set("cookie", `${impersonation}; ${saved}`)
      .send({})
      .expect(200);
    const events = (await eventsOf(user.id)).filter((e) => e.type.startsWith("impersonation"));
    const sessionId = started.body.session.id as string;
    expect(events.map((e) => [e.type, e.actorId, e.detail])).toEqual([
      ["impersonation_started", admin.id, { session: sessionId }],
      ["impersonation_stopped", admin.id, { session: sessionId }],
    ]);
    const ended = (await webhooksOf(user.id)).filter((w) => w.type === "session.revoked");
    expect(ended.map((w) => w.data)).toEqual([{ id: sessionId, userId: user.id, reason: "impersonation_stopped" }]);
    await expectNoSecrets(user.id, [impersonation ?? "", saved ?? ""]);
  });

  it("remove-user: one account_deleted by the admin and one user.deleted, which outlive the user row", async () => {
    const { user, cookie } = await signUp(kit.app, { password: PASSWORD });
    await post("remove-user", { userId: user.id }).expect(200);
    const deleted = (await eventsOf(user.id)).filter((e) => e.type === "account_deleted");
    expect(deleted.map((e) => [e.actorId, e.userAgent])).toEqual([[admin.id, AGENT]]);
    expect((await webhooksOf(user.id)).filter((w) => w.type === "user.deleted").map((w) => w.data)).toEqual([{ id: user.id }]);
    // The user row goes once the API is done; its events stay until their retention ends.
    await kit.db.prisma.userDeletion.update({ where: { userId: user.id }, data: { apiDoneAt: new Date() } });
    await kit.service.settings.completeDeletions();
    expect(await kit.db.prisma.user.findUnique({ where: { id: user.id } })).toBeNull();
    expect((await eventsOf(user.id)).some((e) => e.type === "account_deleted")).toBe(true);
    await expectNoSecrets(user.id, [cookie]);
  });

  it("a refused action records nothing: a non-admin's, and an admin's that fails", async () => {
    const { user, cookie } = await signUp(kit.app, { password: PASSWORD });
    const before = (await eventsOf(user.id)).length;
    await post("set-role", { userId: admin.id, role: "user" }, cookie).expect(403);
    await post("ban-user", { userId: admin.id }).expect(400);
    await post("set-role", { userId: admin.id, role: "user" }).expect(409);
    expect((await eventsOf(admin.id)).filter((e) => e.actorId !== null)).toEqual([]);
    expect((await eventsOf(user.id)).length).toBe(before);
  });
});
