import request from "supertest";
import { afterEach, describe, expect, it } from "vitest";
import { identityKit, type Kit, signUp } from "./kit.js";

// Password checks outside sign-in, behind a session (change-password, delete-user): wrong
// passwords count per user and per IP.
const open: Kit[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((k) => k.close()));
});

async function kit(env: Record<string, string>) {
  const k = await identityKit({ env });
  open.push(k);
  return k;
}

const PASSWORD = "correct horse battery";

const changePassword = (k: Kit, cookie: string, currentPassword: string, ip: string) =>
  request(k.app)
    .post("/api/auth/change-password")
    .set("cookie", cookie)
    .set("x-forwarded-for", ip)
    .send({ currentPassword, newPassword: "another good password" });

const deleteUser = (k: Kit, cookie: string, password: string, ip: string) =>
  request(k.app).post("/api/auth/delete-user").set("cookie", cookie).set("x-forwarded-for", ip).send({ password });

function expectLimited(res: request.Response) {
  expect(res.status, JSON.stringify(res.body)).toBe(429);
  expect(res.body).toMatchObject({ ok: false, error: { code: "rate_limited" } });
  expect(Number(res.headers["retry-after"])).toBeGreaterThanOrEqual(1);
}

describe("password checks behind a session", () => {
  it("counts wrong passwords per user across change-password and delete-user, from any address, and refuses with 429", async () => {
    const k = await kit({ RATE_LIMIT_ACCOUNT_MAX: "4", RATE_LIMIT_IP_MAX: "1000" });
    const { cookie } = await signUp(k.app, { password: PASSWORD });
    const statuses: number[] = [];
    for (let i = 0; i < 40; i += 1) {
      const res =
        i % 2 === 0
          ? await changePassword(k, cookie, `wrong password ${i}`, `203.0.113.${i}`)
          : await deleteUser(k, cookie, `wrong password ${i}`, `203.0.113.${i}`);
      statuses.push(res.status);
      if (res.status === 429) expectLimited(res);
    }
    expect(statuses.slice(0, 4)).toEqual([400, 400, 400, 400]);
    expect(statuses.slice(4).every((s) => s === 429)).toBe(true);
    // The right password waits for the window too: the guesses did not reach argon2.
    expectLimited(await changePassword(k, cookie, PASSWORD, "198.51.100.1"));
    // Another user on the same addresses is not affected.
    const other = await signUp(k.app, { password: PASSWORD });
    expect((await changePassword(k, other.cookie, "wrong password", "203.0.113.1")).status).toBe(400);
    expect((await changePassword(k, other.cookie, PASSWORD, "203.0.113.1")).status).toBe(200);
  });

  it("counts wrong passwords per IP across users, and a correct password resets the user's count", async () => {
    const k = await kit({ RATE_LIMIT_ACCOUNT_MAX: "3", RATE_LIMIT_IP_MAX: "4" });
    const users = await Promise.all([0, 1, 2].map(() => signUp(k.app, { password: PASSWORD })));
    const ip = "203.0.113.50";
    const [a, b, c] = users.map((u) => u.cookie) as [string, string, string];
    expect((await changePassword(k, a, "wrong 1", ip)).status).toBe(400);
    expect((await changePassword(k, a, "wrong 2", ip)).status).toBe(400);
    // Correct: the user's count starts again (the address keeps its own).
    expect((await changePassword(k, a, PASSWORD, ip)).status).toBe(200);
    expect((await changePassword(k, b, "wrong 3", ip)).status).toBe(400);
    expect((await deleteUser(k, c, "wrong 4", ip)).status).toBe(400);
    expectLimited(await changePassword(k, c, PASSWORD, ip));
    expectLimited(await deleteUser(k, b, PASSWORD, ip));
    // From another address the same users go on.
    expect((await deleteUser(k, c, PASSWORD, "198.51.100.2")).status).toBe(200);
  });

  it("does not count requests without a session or with a bad body", async () => {
    const k = await kit({ RATE_LIMIT_ACCOUNT_MAX: "2", RATE_LIMIT_IP_MAX: "2" });
    const { cookie } = await signUp(k.app, { password: PASSWORD });
    for (let i = 0; i < 5; i += 1) {
      expect((await changePassword(k, "identity.session_token=nope.nope", "wrong", "203.0.113.9")).status).toBe(401);
      expect((await request(k.app).post("/api/auth/change-password").set("cookie", cookie).send({ currentPassword: 1 })).status).toBe(400);
    }
    expect((await changePassword(k, cookie, PASSWORD, "203.0.113.9")).status).toBe(200);
  });
});
