import { randomUUID } from "node:crypto";
import { USER_DELETED_CHANNEL } from "@app/contracts";
import { createDb } from "@app/db";
import { createLocalJWKSet, jwtVerify } from "jose";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { runHousekeeping } from "../src/housekeeping.js";
import { sessionCookie, signUp } from "./kit.js";
import { linkOf, type MailKit, mailKit } from "./mail-kit.js";

let kit: MailKit;
beforeAll(async () => {
  kit = await mailKit();
});
afterAll(async () => {
  await kit?.close();
});

const PASSWORD = "correct horse battery";
const silent = { info() {}, warn() {}, debug() {}, error() {} } as never;

async function signIn(email: string, password = PASSWORD, agent = "agent-b") {
  const res = await request(kit.app).post("/api/auth/sign-in/email").set("user-agent", agent).send({ email, password }).expect(200);
  return sessionCookie(res) ?? "";
}

describe("change-password", () => {
  it("needs the current password; with revokeOtherSessions only the current session stays", async () => {
    const { cookie, body } = await signUp(kit.app);
    const other = await signIn(body.email);
    const wrong = await request(kit.app)
      .post("/api/auth/change-password")
      .set("cookie", cookie)
      .send({ currentPassword: "not it at all", newPassword: "next password 1" })
      .expect(400);
    expect(wrong.body.code).toBe("invalid_password");
    await request(kit.app)
      .post("/api/auth/change-password")
      .set("cookie", cookie)
      .send({ currentPassword: PASSWORD, newPassword: "next password 1", revokeOtherSessions: true })
      .expect(200);
    await request(kit.app).post("/api/auth/get-session").set("cookie", cookie).expect(200);
    await request(kit.app).post("/api/auth/get-session").set("cookie", other).expect(401);
    await signIn(body.email, "next password 1");
    await request(kit.app).post("/api/auth/sign-in/email").send({ email: body.email, password: PASSWORD }).expect(401);
  });

  it("keeps other sessions without revokeOtherSessions, and refuses a short new password with 400", async () => {
    const { cookie, body } = await signUp(kit.app);
    const other = await signIn(body.email);
    await request(kit.app)
      .post("/api/auth/change-password")
      .set("cookie", cookie)
      .send({ currentPassword: PASSWORD, newPassword: "short" })
      .expect(400);
    await request(kit.app)
      .post("/api/auth/change-password")
      .set("cookie", cookie)
      .send({ currentPassword: PASSWORD, newPassword: "long enough now" })
      .expect(200);
    await request(kit.app).post("/api/auth/get-session").set("cookie", other).expect(200);
    await request(kit.app)
      .post("/api/auth/change-password")
      .send({ currentPassword: PASSWORD, newPassword: "long enough now" })
      .expect(401);
  });
});

describe("update-user", () => {
  it("changes name and image; get-session shows them; the email cannot be set here", async () => {
    const { cookie } = await signUp(kit.app);
    const res = await request(kit.app)
      .post("/api/auth/update-user")
      .set("cookie", cookie)
      .send({ name: "New Name", image: "https://img.example.com/a.png" })
      .expect(200);
    expect(res.body).toMatchObject({ status: true, user: { name: "New Name", image: "https://img.example.com/a.png" } });
    const session = await request(kit.app).get("/api/auth/get-session").set("cookie", cookie).expect(200);
    expect(session.body.user).toMatchObject({ name: "New Name", image: "https://img.example.com/a.png" });
    await request(kit.app).post("/api/auth/update-user").set("cookie", cookie).send({ image: null }).expect(200);
    await request(kit.app).post("/api/auth/update-user").set("cookie", cookie).send({ email: "x@example.com" }).expect(400);
    await request(kit.app).post("/api/auth/update-user").set("cookie", cookie).send({}).expect(400);
    await request(kit.app).post("/api/auth/update-user").set("cookie", cookie).send({ image: "javascript:alert(1)" }).expect(400);
  });
});

describe("sessions", () => {
  it("lists the user's sessions with metadata, marks the current one and never shows a secret", async () => {
    const { cookie, body, user } = await signUp(kit.app);
    const other = await signIn(body.email, PASSWORD, "phone-browser");
    const res = await request(kit.app).get("/api/auth/list-sessions").set("cookie", cookie).expect(200);
    expect(res.body).toHaveLength(2);
    const current = res.body.find((s: { current: boolean }) => s.current);
    expect(current.id).toBe(cookie.split("=")[1]?.split(".")[0]);
    expect(res.body.find((s: { current: boolean }) => !s.current)).toMatchObject({
      userId: user.id,
      userAgent: "phone-browser",
      ipAddress: expect.any(String),
    });
    for (const c of [cookie, other]) expect(JSON.stringify(res.body)).not.toContain(c.split(".")[1]);
    expect(Object.keys(current).sort()).toEqual([
      "createdAt",
      "current",
      "expiresAt",
      "id",
      "ipAddress",
      "token",
      "updatedAt",
      "userAgent",
      "userId",
    ]);
  });

  it("revoke-session ends one session by id or by cookie token, never another user's", async () => {
    const { cookie, body } = await signUp(kit.app);
    const second = await signIn(body.email);
    const third = await signIn(body.email);
    const stranger = await signUp(kit.app);
    const id = (c: string) => c.split("=")[1]?.split(".")[0] ?? "";
    await request(kit.app)
      .post("/api/auth/revoke-session")
      .set("cookie", cookie)
      .send({ id: id(second) })
      .expect(200, { status: true });
    await request(kit.app).post("/api/auth/get-session").set("cookie", second).expect(401);
    await request(kit.app)
      .post("/api/auth/revoke-session")
      .set("cookie", cookie)
      .send({ token: third.split("=")[1] })
      .expect(200);
    await request(kit.app).post("/api/auth/get-session").set("cookie", third).expect(401);
    await request(kit.app)
      .post("/api/auth/revoke-session")
      .set("cookie", cookie)
      .send({ id: id(stranger.cookie) })
      .expect(200);
    await request(kit.app).post("/api/auth/get-session").set("cookie", stranger.cookie).expect(200);
    await request(kit.app).post("/api/auth/revoke-session").set("cookie", cookie).send({}).expect(400);
  });

  it("revoke-other-sessions keeps only the current session", async () => {
    const { cookie, body } = await signUp(kit.app);
    const others = [await signIn(body.email), await signIn(body.email)];
    await request(kit.app).post("/api/auth/revoke-other-sessions").set("cookie", cookie).expect(200, { status: true });
    for (const c of others) await request(kit.app).post("/api/auth/get-session").set("cookie", c).expect(401);
    await request(kit.app).post("/api/auth/get-session").set("cookie", cookie).expect(200);
    await request(kit.app).post("/api/auth/revoke-other-sessions").expect(401);
  });
});

describe("token", () => {
  it("answers {token}: a JWT verified by the published key set; 401 without a session", async () => {
    const { cookie, user } = await signUp(kit.app);
    const res = await request(kit.app).get("/api/auth/token").set("cookie", cookie).expect(200);
    const jwks = createLocalJWKSet((await request(kit.app).get("/api/auth/jwks")).body);
    const { payload } = await jwtVerify(res.body.token, jwks, { issuer: kit.config.issuer, audience: kit.config.audience });
    expect(payload.sub).toBe(user.id);
    await request(kit.app).get("/api/auth/token").expect(401);
  });
});

describe("get-session without a session", () => {
  it("GET answers 200 null as better-auth does; POST answers 401 as the contract's step 2", async () => {
    const get = await request(kit.app).get("/api/auth/get-session").expect(200);
    expect(get.body).toBeNull();
    await request(kit.app).post("/api/auth/get-session").expect(401);
  });
});

describe("REQUIRE_EMAIL_VERIFICATION", () => {
  it("refuses sign-in of an unverified user with 403 email_not_verified and resends the mail; verified users sign in", async () => {
    const strict = await mailKit({ env: { REQUIRE_EMAIL_VERIFICATION: "true" } });
    try {
      // Sign-up signs nobody in when verification is required (services/verified-sign-up.ts).
      const body = { email: `strict-${Date.now()}@example.com`, password: PASSWORD, name: "Strict" };
      await request(strict.app).post("/api/auth/sign-up/email").send(body).expect(200);
      const first = await strict.mailTo(body.email, "Verify");
      const wrong = await request(strict.app)
        .post("/api/auth/sign-in/email")
        .send({ email: body.email, password: "wrong password" })
        .expect(401);
      expect(wrong.body.code).toBe("invalid_credentials");
      // The sign-up mail is under a minute old: the refusal resends nothing yet.
      const res = await request(strict.app).post("/api/auth/sign-in/email").send({ email: body.email, password: PASSWORD }).expect(403);
      expect(res.body.code).toBe("email_not_verified");
      expect(sessionCookie(res)).toBeUndefined();
      await strict.db.prisma.verification.updateMany({ data: { createdAt: new Date(Date.now() - 120_000) } });
      await request(strict.app).post("/api/auth/sign-in/email").send({ email: body.email, password: PASSWORD }).expect(403);
      const resent = await strict.catcher.waitFor((m) => m.to.includes(body.email) && m.id !== first.id);
      // Nobody is signed in: the link's GET shows the confirmation page, and the click with the
      // account's password (what the page's script sends) verifies it and keeps the password.
      const link = new URL(linkOf(resent));
      await request(strict.app)
        .get(link.pathname + link.search)
        .expect(200);
      await request(strict.app)
        .post("/api/auth/verify-email")
        .send({ token: link.searchParams.get("token"), password: PASSWORD })
        .expect(200);
      await request(strict.app).post("/api/auth/sign-in/email").send({ email: body.email, password: PASSWORD }).expect(200);
    } finally {
      await strict.close();
    }
  });
});

describe("delete-user", () => {
  it("needs the password; removes identity's rows, frees the email, writes the outbox and NOTIFYs the API", async () => {
    // The API's role, as the API connects.
    const apiDb = createDb(kit.database.apiUrl, { max: 2 });
    const listener = await apiDb.pool.connect();
    const notes: string[] = [];
    listener.on("notification", (n) => notes.push(n.payload ?? ""));
    await listener.query(`LISTEN ${USER_DELETED_CHANNEL}`);
    try {
      const { cookie, body, user } = await signUp(kit.app);
      const other = await signIn(body.email);
      // A business row of the user, written as the API would.
      const api = apiDb.pool;
      const taskId = randomUUID();
      await api.query(`INSERT INTO "task" (id, user_id, title, updated_at) VALUES ($1, $2, 't', now())`, [taskId, user.id]);
      // A passkey: until housekeeping removes the row, it must not sign the deleted account in.
      await kit.db.prisma.passkey.create({
        data: { id: randomUUID(), userId: user.id, credentialId: randomUUID(), publicKey: new Uint8Array([1]), deviceType: "singleDevice" },
      });

      const wrong = await request(kit.app)
        .post("/api/auth/delete-user")
        .set("cookie", cookie)
        .send({ password: "not the password" })
        .expect(400);
      expect(wrong.body.code).toBe("invalid_password");
      const res = await request(kit.app).post("/api/auth/delete-user").set("cookie", cookie).send({ password: PASSWORD }).expect(200);
      expect(res.body).toEqual({ success: true, message: "User deleted" });
      expect(res.headers["set-cookie"]?.[0]).toMatch(/identity\.session_token=;/);

      for (const c of [cookie, other]) await request(kit.app).post("/api/auth/get-session").set("cookie", c).expect(401);
      await request(kit.app).post("/api/auth/sign-in/email").send({ email: body.email, password: PASSWORD }).expect(401);
      expect(await kit.db.prisma.account.count({ where: { userId: user.id } })).toBe(0);
      expect(await kit.db.prisma.session.count({ where: { userId: user.id } })).toBe(0);
      expect(await kit.db.prisma.passkey.count({ where: { userId: user.id } })).toBe(0);
      await vi.waitFor(() => expect(notes.map((n) => JSON.parse(n))).toContainEqual({ userId: user.id }));

      // The API sees the pending deletion (and no longer the user), marks its part done...
      const outbox = await api.query(`SELECT user_id FROM "user_deletion" WHERE api_done_at IS NULL`);
      expect(outbox.rows.map((r) => r.user_id)).toContain(user.id);
      expect((await api.query(`SELECT 1 FROM "user_directory" WHERE id = $1`, [user.id])).rowCount).toBe(0);
      await api.query(`DELETE FROM "task" WHERE user_id = $1`, [user.id]);
      await api.query(`UPDATE "user_deletion" SET api_done_at = now() WHERE user_id = $1`, [user.id]);
      await expect(api.query(`UPDATE "user_deletion" SET completed_at = now()`)).rejects.toThrow(/permission denied/);

      // ...and identity's housekeeping deletes the user row.
      const round = await runHousekeeping(kit.service, { logger: silent, keyRotationMs: 0, organizations: kit.organizations });
      expect(round.completedDeletions).toBe(1);
      expect(await kit.db.prisma.user.count({ where: { id: user.id } })).toBe(0);

      // The address is free again.
      await signUp(kit.app, { email: body.email });
    } finally {
      listener.release();
      await apiDb.close();
    }
  });

  it("answers 401 without a session, 400 for an empty password, and never deletes an account with a password on the cookie alone", async () => {
    await request(kit.app).post("/api/auth/delete-user").send({ password: PASSWORD }).expect(401);
    const { cookie } = await signUp(kit.app);
    await request(kit.app).post("/api/auth/delete-user").set("cookie", cookie).send({ password: "" }).expect(400);
    // A fresh session without the password: the mailed confirmation, or 403 without mail; never a deletion.
    const res = await request(kit.app).post("/api/auth/delete-user").set("cookie", cookie).send({});
    expect(res.status === 403 ? res.body.code : res.body.message).toMatch(/session_not_fresh|Verification email sent/);
    await request(kit.app).get("/api/auth/get-session").set("cookie", cookie).expect(200);
  });
});
