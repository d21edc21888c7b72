import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { identityKit, type Kit, sessionCookie, signUp } from "./kit.js";

// better-auth's session routes on identity (real PostgreSQL): list-sessions rows carry the token
// revokeSession takes (the session's id, never the cookie's secret), revoke-sessions,
// update-session and /ok; and delete-user of a stale session where no mail can be sent.
let kit: Kit;
beforeAll(async () => {
  kit = await identityKit();
});
afterAll(async () => {
  await kit?.close();
});

const PASSWORD = "correct horse battery";
const HOUR = 60 * 60 * 1000;

async function signIn(email: string, agent = "agent-b") {
  const res = await request(kit.app)
    .post("/api/auth/sign-in/email")
    .set("user-agent", agent)
    .send({ email, password: PASSWORD })
    .expect(200);
  return sessionCookie(res) ?? "";
}

/** The `<id>.<secret>` value of a `name=value` cookie. */
const cookieValue = (cookie: string) => cookie.slice(cookie.indexOf("=") + 1);
const alive = async (cookie: string) => (await request(kit.app).post("/api/auth/get-session").set("cookie", cookie)).status === 200;

type Row = { id: string; token: string; current: boolean; userAgent: string | null };
async function listSessions(cookie: string): Promise<Row[]> {
  return (await request(kit.app).get("/api/auth/list-sessions").set("cookie", cookie).expect(200)).body as Row[];
}

describe("list-sessions' token", () => {
  it("is the session's id: never the cookie, never its secret", async () => {
    const { cookie, body } = await signUp(kit.app);
    const phone = await signIn(body.email, "phone");
    const rows = await listSessions(cookie);
    expect(rows).toHaveLength(2);
    for (const c of [cookie, phone]) {
      const [id, secret] = cookieValue(c).split(".") as [string, string];
      const row = rows.find((r) => r.id === id);
      expect(row?.token).toBe(id);
      expect(row?.token).not.toBe(cookieValue(c));
      expect(row?.token).not.toContain(secret);
      expect(JSON.stringify(rows)).not.toContain(secret);
    }
  });

  it("is what revoke-session takes, as better-auth's revokeSession({ token }) sends it", async () => {
    const { cookie, body } = await signUp(kit.app);
    const phone = await signIn(body.email, "phone");
    const rows = await listSessions(cookie);
    const phoneRow = rows.find((r) => !r.current);
    await request(kit.app)
      .post("/api/auth/revoke-session")
      .set("cookie", cookie)
      .send({ token: phoneRow?.token })
      .expect(200, { status: true });
    expect(await alive(phone)).toBe(false);
    expect(await alive(cookie)).toBe(true);
    // The request's own token ends it and clears its cookie.
    const own = rows.find((r) => r.current);
    const res = await request(kit.app).post("/api/auth/revoke-session").set("cookie", cookie).send({ token: own?.token }).expect(200);
    expect(res.headers["set-cookie"]?.[0]).toMatch(/identity\.session_token=;/);
    expect(await alive(cookie)).toBe(false);
  });
});

describe("revoke-sessions", () => {
  it("ends every session of the user, this one included, and no one else's", async () => {
    const { cookie, body } = await signUp(kit.app);
    const others = [await signIn(body.email), await signIn(body.email)];
    const stranger = await signUp(kit.app);
    const res = await request(kit.app).post("/api/auth/revoke-sessions").set("cookie", cookie).expect(200, { status: true });
    expect(res.headers["set-cookie"]?.[0]).toMatch(/identity\.session_token=;/);
    for (const c of [cookie, ...others]) expect(await alive(c)).toBe(false);
    expect(await alive(stranger.cookie)).toBe(true);
    await request(kit.app).post("/api/auth/revoke-sessions").set("cookie", cookie).expect(401);
  });
});

describe("update-session", () => {
  it("sets the session's userAgent and answers the session as better-auth does", async () => {
    const { cookie, user, body } = await signUp(kit.app);
    const other = await signIn(body.email, "untouched");
    const res = await request(kit.app)
      .post("/api/auth/update-session")
      .set("cookie", cookie)
      .send({ userAgent: "Work laptop" })
      .expect(200);
    const [id, secret] = cookieValue(cookie).split(".") as [string, string];
    expect(res.body).toEqual({
      session: {
        id,
        token: id,
        userId: user.id,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
        expiresAt: expect.any(String),
        ipAddress: expect.any(String),
        userAgent: "Work laptop",
      },
    });
    expect(JSON.stringify(res.body)).not.toContain(secret);
    const rows = await listSessions(cookie);
    expect(rows.find((r) => r.current)?.userAgent).toBe("Work laptop");
    expect(rows.find((r) => !r.current)?.userAgent).toBe("untouched");
    // Keys better-auth does not declare are ignored: with nothing else, nothing to update.
    for (const bad of [{}, { expiresAt: "2099-01-01T00:00:00Z" }, { userAgent: 5 }, { userAgent: "x".repeat(513) }]) {
      const refused = await request(kit.app).post("/api/auth/update-session").set("cookie", cookie).send(bad).expect(400);
      expect(refused.body.code).toBe("validation_failed");
    }
    await request(kit.app).post("/api/auth/update-session").set("cookie", cookie).send({ userAgent: null }).expect(200);
    await request(kit.app).post("/api/auth/update-session").send({ userAgent: "x" }).expect(401);
    expect(await alive(other)).toBe(true);
  });
});

describe("ok", () => {
  it("answers { ok: true }, never cached", async () => {
    const res = await request(kit.app).get("/api/auth/ok").expect(200);
    expect(res.body).toEqual({ ok: true });
    expect(res.headers["cache-control"]).toBe("no-store");
  });
});

describe("delete-user without mail (no SMTP_URL)", () => {
  it("never deletes an account with a password on a fresh session's cookie alone (a stolen cookie deletes nothing)", async () => {
    const { cookie, user } = await signUp(kit.app);
    const res = await request(kit.app).post("/api/auth/delete-user").set("cookie", cookie).send({}).expect(403);
    expect(res.body.code).toBe("session_not_fresh");
    expect(await kit.db.prisma.userDeletion.count({ where: { userId: user.id } })).toBe(0);
  });

  it("answers 403 session_not_fresh on a stale session without the password; the password still deletes", async () => {
    const { cookie, user } = await signUp(kit.app);
    await kit.db.prisma.session.updateMany({ where: { userId: user.id }, data: { createdAt: new Date(Date.now() - 25 * HOUR) } });
    const stale = await request(kit.app).post("/api/auth/delete-user").set("cookie", cookie).send({}).expect(403);
    expect(stale.body.code).toBe("session_not_fresh");
    const wrong = await request(kit.app)
      .post("/api/auth/delete-user")
      .set("cookie", cookie)
      .send({ password: "not it at all" })
      .expect(400);
    expect(wrong.body.code).toBe("invalid_password");
    expect(await kit.db.prisma.userDeletion.count({ where: { userId: user.id } })).toBe(0);
    await request(kit.app).post("/api/auth/delete-user").set("cookie", cookie).send({ password: PASSWORD }).expect(200);
    expect(await kit.db.prisma.userDeletion.count({ where: { userId: user.id } })).toBe(1);
  });

  it("checks a given password even on a fresh session, and the callbackURL against the trusted origins", async () => {
    const { cookie, user } = await signUp(kit.app);
    const wrong = await request(kit.app)
      .post("/api/auth/delete-user")
      .set("cookie", cookie)
      .send({ password: "not it at all" })
      .expect(400);
    expect(wrong.body.code).toBe("invalid_password");
    await request(kit.app).post("/api/auth/delete-user").set("cookie", cookie).send({ callbackURL: "https://evil.example/" }).expect(403);
    await request(kit.app).post("/api/auth/delete-user").set("cookie", cookie).send({ token: "not-a-token" }).expect(400);
    expect(await kit.db.prisma.userDeletion.count({ where: { userId: user.id } })).toBe(0);
    await request(kit.app).post("/api/auth/delete-user").send({}).expect(401);
  });
});
