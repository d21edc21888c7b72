import { generate } from "otplib";
import { parseSetCookie } from "set-cookie-parser";
import request from "supertest";
import { afterEach, describe, expect, it } from "vitest";
import { frozenClock, identityKit, type Kit, sessionCookie, signUp } from "./kit.js";

// Wrong second-factor codes are rate limited as sign-in's wrong passwords are: per IP and per
// (user, IP) a 429, per user from any address only a capped delay, never a lock of the owner.
const PASSWORD = "correct horse battery";
const open: Kit[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((k) => k.close()));
});

async function kit(env: Record<string, string>) {
  const clock = frozenClock();
  const k = await identityKit({ env, now: clock.now });
  open.push(k);
  return { k, clock };
}

/** A user with two-factor on: their email and TOTP secret. */
async function twoFactorUser(k: Kit, clock: ReturnType<typeof frozenClock>) {
  const { cookie, body } = await signUp(k.app);
  const enabled = await request(k.app).post("/api/auth/two-factor/enable").set("cookie", cookie).send({ password: PASSWORD }).expect(200);
  const secret = new URL(enabled.body.totpURI).searchParams.get("secret") ?? "";
  const code = await generate({ secret, epoch: Math.floor(clock.now() / 1000) });
  await request(k.app).post("/api/auth/two-factor/verify-totp").set("cookie", cookie).send({ code }).expect(200);
  clock.advance(30_000);
  return { email: body.email, secret };
}

/** Signs in with the password from `ip`: the pending second-factor cookie. */
async function pendingSignIn(k: Kit, email: string, ip: string): Promise<string> {
  const res = await request(k.app)
    .post("/api/auth/sign-in/email")
    .set("x-forwarded-for", ip)
    .send({ email, password: PASSWORD })
    .expect(200);
  expect(res.body.twoFactorRedirect).toBe(true);
  const pending = parseSetCookie(res.headers["set-cookie"] as unknown as string[]).find((c) => c.name === "identity.two_factor");
  return `identity.two_factor=${pending?.value}`;
}

const verify = (k: Kit, cookie: string, code: string, ip: string) =>
  request(k.app).post("/api/auth/two-factor/verify-totp").set("cookie", cookie).set("x-forwarded-for", ip).send({ code });

function expectLimited(res: request.Response) {
  expect(res.status, JSON.stringify(res.body)).toBe(429);
  expect(res.body).toMatchObject({ ok: false, error: { code: "rate_limited" } });
  expect(Number(res.headers["retry-after"])).toBeGreaterThanOrEqual(1);
}

describe("wrong second-factor codes", () => {
  it("answer 429 per (user, IP): the right code from that address waits too, another address goes on", async () => {
    const { k, clock } = await kit({ RATE_LIMIT_ACCOUNT_MAX: "3" });
    const { email, secret } = await twoFactorUser(k, clock);
    const ip = "203.0.113.7";
    const pending = await pendingSignIn(k, email, ip);
    for (const code of ["000001", "000002", "000003"]) expect((await verify(k, pending, code, ip)).status).toBe(401);
    const code = await generate({ secret, epoch: Math.floor(clock.now() / 1000) });
    expectLimited(await verify(k, pending, "000004", ip));
    expectLimited(await verify(k, pending, code, ip));
    const elsewhere = await pendingSignIn(k, email, "198.51.100.7");
    const ok = await verify(k, elsewhere, code, "198.51.100.7");
    expect(ok.status).toBe(200);
    expect(sessionCookie(ok)).toBeTruthy();
  });

  it("answer 429 per IP across users", async () => {
    const { k, clock } = await kit({ RATE_LIMIT_IP_MAX: "4" });
    const a = await twoFactorUser(k, clock);
    const b = await twoFactorUser(k, clock);
    const ip = "203.0.113.8";
    const [pa, pb] = [await pendingSignIn(k, a.email, ip), await pendingSignIn(k, b.email, ip)];
    for (const [cookie, code] of [
      [pa, "000001"],
      [pa, "000002"],
      [pb, "000003"],
      [pb, "000004"],
    ] as const)
      expect((await verify(k, cookie, code, ip)).status).toBe(401);
    const right = await generate({ secret: b.secret, epoch: Math.floor(clock.now() / 1000) });
    expectLimited(await verify(k, pb, right, ip));
    // The same pending sign-in from another address is not limited.
    expect((await verify(k, pb, right, "198.51.100.8")).status).toBe(200);
  });

  it("slow one user down from any address, capped and never a lock; the right code resets it", async () => {
    const { k, clock } = await kit({
      RATE_LIMIT_ACCOUNT_DELAY_AFTER: "2",
      RATE_LIMIT_ACCOUNT_DELAY_MS: "10",
      RATE_LIMIT_ACCOUNT_DELAY_MAX_MS: "40",
    });
    const { email, secret } = await twoFactorUser(k, clock);
    // Seven wrong codes from seven addresses, over two pending sign-ins (five tries each).
    let pending = await pendingSignIn(k, email, "198.51.100.1");
    for (let i = 1; i <= 7; i++) {
      if (i === 6) pending = await pendingSignIn(k, email, "198.51.100.1");
      expect((await verify(k, pending, `00000${i}`, `203.0.113.${i}`)).status).toBe(401);
    }
    const delayed = () => k.logs.filter((l) => l.includes("two-factor delayed: recent failed attempts"));
    expect(delayed().map((l) => JSON.parse(l).delayMs)).toEqual([10, 20, 40, 40, 40]);
    // The owner's right code waits the capped delay, and gets in.
    const code = await generate({ secret, epoch: Math.floor(clock.now() / 1000) });
    expect((await verify(k, pending, code, "192.0.2.1")).status).toBe(200);
    expect(delayed().map((l) => JSON.parse(l).delayMs)).toEqual([10, 20, 40, 40, 40, 40]);
    // The success reset the user: the next wrong code is not delayed.
    const next = await pendingSignIn(k, email, "198.51.100.1");
    expect((await verify(k, next, "000009", "203.0.113.9")).status).toBe(401);
    expect(delayed()).toHaveLength(6);
  });
});
