import request from "supertest";
import { afterEach, describe, expect, it } from "vitest";
import { identityKit, type Kit } from "./kit.js";

// POST reset-password hashes the new password once its token checks out: it is limited per IP
// like sign-in, before the body is read.
const open: Kit[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((k) => k.close()));
});

describe("POST reset-password", () => {
  it("is limited per IP like sign-in (every request counts, the GET link does not)", async () => {
    const k = await identityKit({ env: { RATE_LIMIT_IP_MAX: "3" } });
    open.push(k);
    const reset = (ip: string) =>
      request(k.app)
        .post("/api/auth/reset-password")
        .set("x-forwarded-for", ip)
        .send({ token: "not-a-real-token", newPassword: "a new password" });
    for (let i = 0; i < 5; i += 1) await request(k.app).get("/api/auth/reset-password/not-a-real-token?callbackURL=/reset").expect(302);
    for (let i = 0; i < 3; i += 1) expect((await reset("203.0.113.77")).status).toBe(400);
    const limited = await reset("203.0.113.77");
    expect(limited.status).toBe(429);
    expect(limited.body).toMatchObject({ ok: false, error: { code: "rate_limited" } });
    expect(Number(limited.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    expect((await reset("203.0.113.78")).status).toBe(400);
  });
});
