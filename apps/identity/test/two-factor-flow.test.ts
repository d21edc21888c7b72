import { decodeJwt } from "jose";
import { generate } from "otplib";
import { parseSetCookie } from "set-cookie-parser";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { frozenClock, signUp } from "./kit.js";
import { type MailKit, mailKit } from "./mail-kit.js";

// Two-factor authentication end to end on a real database and real SMTP: enrolment, sign-in with
// a second factor (TOTP, emailed code, backup code), trusted devices, and turning it off. The app's
// clock is frozen and moved by hand, so TOTP time steps are exact.
const PASSWORD = "correct horse battery";
const SESSION = "identity.session_token";
const PENDING = "identity.two_factor";
const TRUST = "identity.trust_device";
const clock = frozenClock();
let kit: MailKit;

beforeAll(async () => {
  kit = await mailKit({ now: clock.now });
});
afterAll(async () => {
  await kit?.close();
});

/** One browser: the cookies identity set, sent back on every request. */
class Jar {
  readonly cookies = new Map<string, string>();
  lines: string[] = [];
  take(res: request.Response): request.Response {
    this.lines = (res.headers["set-cookie"] as unknown as string[] | undefined) ?? [];
    for (const c of parseSetCookie(this.lines)) {
      if (!c.value || c.maxAge === 0 || (c.expires && c.expires.getTime() <= Date.now())) this.cookies.delete(c.name);
      else this.cookies.set(c.name, c.value);
    }
    return res;
  }
  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  }
  /** The Set-Cookie line of the last answer for `name`. */
  line(name: string): string | undefined {
    return this.lines.find((l) => l.startsWith(`${name}=`));
  }
  async post(path: string, body: unknown = {}) {
    return this.take(
      await request(kit.app)
        .post(path)
        .set("cookie", this.header())
        .send(body as object),
    );
  }
  async get(path: string) {
    return this.take(await request(kit.app).get(path).set("cookie", this.header()));
  }
}

const epoch = () => Math.floor(clock.now() / 1000);
const totp = (secret: string, offsetSteps = 0) => generate({ secret, epoch: epoch() + offsetSteps * 30 });
const nextStep = () => clock.advance(30_000);

/** A user with two-factor on (TOTP confirmed): their email, secret, backup codes, and signed-in jar. */
async function twoFactorUser() {
  const { cookie, body } = await signUp(kit.app);
  const jar = new Jar();
  jar.cookies.set(SESSION, cookie.split("=")[1] ?? "");
  const enabled = await jar.post("/api/auth/two-factor/enable", { password: PASSWORD });
  expect(enabled.status, JSON.stringify(enabled.body)).toBe(200);
  const secret = new URL(enabled.body.totpURI).searchParams.get("secret") ?? "";
  const confirmed = await jar.post("/api/auth/two-factor/verify-totp", { code: await totp(secret) });
  expect(confirmed.status, JSON.stringify(confirmed.body)).toBe(200);
  nextStep();
  return { email: body.email, secret, backupCodes: enabled.body.backupCodes as string[], jar };
}

/** Signs in with the password in a new browser (or `jar`): the answer and the jar. */
async function signIn(email: string, jar = new Jar()) {
  const res = await jar.post("/api/auth/sign-in/email", { email, password: PASSWORD });
  return { res, jar };
}

describe("enrolment", () => {
  it("enable answers a TOTP URI and ten backup codes; two-factor is on once the first code verifies, with a mail", async () => {
    const { cookie, body, user } = await signUp(kit.app);
    const jar = new Jar();
    jar.cookies.set(SESSION, cookie.split("=")[1] ?? "");
    const wrong = await jar.post("/api/auth/two-factor/enable", { password: "not the password" });
    expect([wrong.status, wrong.body.code]).toEqual([400, "invalid_password"]);

    const enabled = await jar.post("/api/auth/two-factor/enable", { password: PASSWORD, issuer: "Example" });
    expect(enabled.status).toBe(200);
    expect(enabled.body).toEqual({
      method: "totp",
      totpURI: expect.stringMatching(/^otpauth:\/\/totp\/Example:/),
      backupCodes: expect.any(Array),
    });
    expect(enabled.body.backupCodes).toHaveLength(10);
    for (const code of enabled.body.backupCodes) expect(code).toMatch(/^[A-Za-z0-9]{5}-[A-Za-z0-9]{5}$/);
    const secret = new URL(enabled.body.totpURI).searchParams.get("secret") ?? "";
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);

    // Not on yet: the session says so, and a password alone still signs in.
    expect((await jar.get("/api/auth/get-session")).body.user.twoFactorEnabled).toBe(false);
    const before = await signIn(body.email);
    expect(before.res.status).toBe(200);
    expect(before.jar.cookies.has(SESSION)).toBe(true);

    // Stored: the secret sealed, the backup codes as MACs only.
    const row = await kit.db.prisma.twoFactor.findUniqueOrThrow({ where: { userId: user.id } });
    expect(JSON.stringify(row, (_k, v) => (typeof v === "bigint" ? String(v) : v))).not.toContain(secret);
    for (const code of enabled.body.backupCodes) expect(row.backupCodes.join()).not.toContain(code);

    const wrongCode = await jar.post("/api/auth/two-factor/verify-totp", { code: "000000" });
    expect([wrongCode.status, wrongCode.body.code]).toEqual([401, "invalid_code"]);
    const confirmed = await jar.post("/api/auth/two-factor/verify-totp", { code: await totp(secret) });
    expect(confirmed.status).toBe(200);
    expect(confirmed.body).toEqual({
      token: jar.cookies.get(SESSION)?.split(".")[0],
      user: expect.objectContaining({ twoFactorEnabled: true }),
    });
    expect((await jar.get("/api/auth/get-session")).body.user.twoFactorEnabled).toBe(true);
    const mail = await kit.mailTo(body.email, "Two-factor authentication is on");
    expect(mail.links).toContain(`${kit.config.baseUrl}/account/security`);

    // The URI again (password first), and enable refused now that the app is confirmed.
    const uri = await jar.post("/api/auth/two-factor/get-totp-uri", { password: PASSWORD });
    expect(new URL(uri.body.totpURI).searchParams.get("secret")).toBe(secret);
    expect((await jar.post("/api/auth/two-factor/get-totp-uri", { password: "wrong wrong" })).status).toBe(400);
    const again = await jar.post("/api/auth/two-factor/enable", { password: PASSWORD });
    expect([again.status, again.body.code]).toEqual([400, "bad_request"]);
  });

  it("enables emailed codes alone at once (method otp): sign-in then offers only them", async () => {
    const { cookie, body } = await signUp(kit.app);
    const jar = new Jar();
    jar.cookies.set(SESSION, cookie.split("=")[1] ?? "");
    expect((await jar.post("/api/auth/two-factor/enable", { password: PASSWORD, method: "otp" })).body).toEqual({ method: "otp" });
    await kit.mailTo(body.email, "Two-factor authentication is on");
    const { res, jar: browser } = await signIn(body.email);
    expect(res.body).toEqual({ twoFactorRedirect: true, twoFactorMethods: ["otp"] });
    const totpRefused = await browser.post("/api/auth/two-factor/verify-totp", { code: "123456" });
    expect([totpRefused.status, totpRefused.body.code]).toEqual([400, "two_factor_not_enabled"]);
  });

  it("answers 401 to the signed-in routes without a session and 401 invalid_two_factor_cookie to the verify routes", async () => {
    const jar = new Jar();
    expect((await jar.post("/api/auth/two-factor/enable", { password: PASSWORD })).status).toBe(401);
    const verify = await jar.post("/api/auth/two-factor/verify-totp", { code: "123456" });
    expect([verify.status, verify.body.code]).toEqual([401, "invalid_two_factor_cookie"]);
    expect((await jar.post("/api/auth/two-factor/send-otp")).body.code).toBe("invalid_two_factor_cookie");
  });
});

describe("sign-in with a second factor", () => {
  it("answers twoFactorRedirect with only the pending cookie; get-session is null until verify-totp opens the session", async () => {
    const { email, secret } = await twoFactorUser();
    const { res, jar } = await signIn(email);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ twoFactorRedirect: true, twoFactorMethods: ["totp", "otp"] });
    expect(jar.line(SESSION)).toBeUndefined();
    expect(jar.line(PENDING)).toMatch(/^identity\.two_factor=[\w-]{43}; Max-Age=600; Path=\/; Expires=.*; HttpOnly; SameSite=Lax$/);

    const pending = await jar.get("/api/auth/get-session");
    expect([pending.status, pending.body, pending.headers["set-auth-jwt"]]).toEqual([200, null, undefined]);
    expect((await jar.post("/api/auth/get-session")).status).toBe(401);

    const verified = await jar.post("/api/auth/two-factor/verify-totp", { code: await totp(secret) });
    expect(verified.status).toBe(200);
    expect(verified.body).toEqual({ token: expect.any(String), user: expect.objectContaining({ email, twoFactorEnabled: true }) });
    expect(jar.cookies.has(PENDING)).toBe(false);
    expect(jar.cookies.get(SESSION)?.split(".")[0]).toBe(verified.body.token);
    const session = await jar.get("/api/auth/get-session");
    expect(session.body.user.email).toBe(email);
    // The JWT's claims are the contract's, two-factor or not.
    expect(Object.keys(decodeJwt(session.headers["set-auth-jwt"] ?? "")).sort()).toEqual([
      "aud",
      "email",
      "exp",
      "iat",
      "iss",
      "jti",
      "name",
      "sub",
    ]);

    // Neither the TOTP secret nor the pending cookie's secret is logged.
    const logs = kit.logs.join("\n");
    expect(logs).not.toContain(secret);
    expect(logs).not.toContain(jar.line(PENDING)?.split(";")[0]?.split("=")[1] ?? "missing");

    // The same code in the same time step is refused in the next sign-in.
    const replay = await signIn(email);
    const refused = await replay.jar.post("/api/auth/two-factor/verify-totp", { code: await totp(secret) });
    expect([refused.status, refused.body.code]).toEqual([401, "invalid_code"]);
  });

  it("accepts a code one time step either side and refuses two steps away", async () => {
    const { email, secret } = await twoFactorUser();
    // Two steps past the one enrolment used, so none of the codes below is refused as a replay.
    nextStep();
    nextStep();
    const tryCode = async (offset: number) => {
      const { jar } = await signIn(email);
      return (await jar.post("/api/auth/two-factor/verify-totp", { code: await totp(secret, offset) })).status;
    };
    expect(await tryCode(-2)).toBe(401);
    expect(await tryCode(-1)).toBe(200);
    expect(await tryCode(2)).toBe(401);
    expect(await tryCode(1)).toBe(200);
    // Step +1 was used: the current step is now behind the last accepted one.
    expect(await tryCode(0)).toBe(401);
    nextStep();
    nextStep();
    expect(await tryCode(0)).toBe(200);
  });

  it("keeps rememberMe: false through the second factor (a browser-session cookie)", async () => {
    const { email, secret } = await twoFactorUser();
    const jar = new Jar();
    await jar.post("/api/auth/sign-in/email", { email, password: PASSWORD, rememberMe: false });
    await jar.post("/api/auth/two-factor/verify-totp", { code: await totp(secret) });
    expect(jar.line(SESSION)).toMatch(/^identity\.session_token=[^;]+; Path=\/; HttpOnly; SameSite=Lax$/);
  });

  it("clears an earlier session cookie of the browser and ends a pending sign-in after 10 minutes", async () => {
    const { email, secret } = await twoFactorUser();
    const other = await signUp(kit.app);
    const jar = new Jar();
    jar.cookies.set(SESSION, other.cookie.split("=")[1] ?? "");
    await signIn(email, jar);
    expect(jar.cookies.has(SESSION)).toBe(false);
    expect((await jar.get("/api/auth/get-session")).body).toBeNull();
    clock.advance(10 * 60 * 1000 + 1);
    const late = await jar.post("/api/auth/two-factor/verify-totp", { code: await totp(secret) });
    expect([late.status, late.body.code]).toEqual([401, "invalid_two_factor_cookie"]);
  });

  it("ends a pending sign-in after five codes", async () => {
    const { email, secret } = await twoFactorUser();
    const { jar } = await signIn(email);
    for (let i = 0; i < 5; i++) expect((await jar.post("/api/auth/two-factor/verify-totp", { code: `00000${i}` })).status).toBe(401);
    const sixth = await jar.post("/api/auth/two-factor/verify-totp", { code: await totp(secret) });
    expect([sixth.status, sixth.body.code]).toEqual([403, "too_many_attempts"]);
    expect(jar.cookies.has(PENDING)).toBe(false);
    // A new sign-in starts again.
    const retry = await signIn(email);
    expect((await retry.jar.post("/api/auth/two-factor/verify-totp", { code: await totp(secret) })).status).toBe(200);
  });

  it("finishes with a backup code once; new codes end the old ones, with a mail", async () => {
    const { email, backupCodes, jar: owner } = await twoFactorUser();
    const [first = "", second = "", third = ""] = backupCodes;
    const a = await signIn(email);
    const used = await a.jar.post("/api/auth/two-factor/verify-backup-code", { code: first });
    expect(used.status).toBe(200);
    expect(a.jar.cookies.has(SESSION)).toBe(true);
    const b = await signIn(email);
    const reused = await b.jar.post("/api/auth/two-factor/verify-backup-code", { code: first });
    expect([reused.status, reused.body.code]).toEqual([401, "invalid_code"]);
    expect((await b.jar.post("/api/auth/two-factor/verify-backup-code", { code: second })).status).toBe(200);

    const fresh = await owner.post("/api/auth/two-factor/generate-backup-codes", { password: PASSWORD });
    expect(fresh.body).toEqual({ status: true, backupCodes: expect.any(Array) });
    expect(fresh.body.backupCodes).toHaveLength(10);
    await kit.mailTo(email, "New backup codes");
    const c = await signIn(email);
    expect((await c.jar.post("/api/auth/two-factor/verify-backup-code", { code: third })).status).toBe(401);
    expect((await c.jar.post("/api/auth/two-factor/verify-backup-code", { code: fresh.body.backupCodes[0] })).status).toBe(200);
  });

  it("finishes with a code mailed through the outbox", async () => {
    const { email } = await twoFactorUser();
    const { jar } = await signIn(email);
    expect((await jar.post("/api/auth/two-factor/send-otp")).body).toEqual({ status: true });
    const mail = await kit.mailTo(email, "Your sign-in verification code");
    const code = /\b(\d{6})\b/.exec(mail.text)?.[1] ?? "";
    expect(code).toMatch(/^\d{6}$/);
    const stored = await kit.db.prisma.authChallenge.findMany({ where: { purpose: "two-factor-otp" } });
    expect(JSON.stringify(stored)).not.toContain(code);
    const wrong = await jar.post("/api/auth/two-factor/verify-otp", { code: code === "000000" ? "111111" : "000000" });
    expect([wrong.status, wrong.body.code]).toEqual([401, "invalid_code"]);
    const ok = await jar.post("/api/auth/two-factor/verify-otp", { code });
    expect(ok.status).toBe(200);
    expect((await jar.get("/api/auth/get-session")).body.user.email).toBe(email);
    const again = await jar.post("/api/auth/two-factor/verify-otp", { code });
    expect([again.status, again.body.code]).toEqual([400, "code_expired"]);
  });

  it("trusts a device for 30 days; turning two-factor off ends its trusted devices, with a mail", async () => {
    const { email, secret, jar: owner } = await twoFactorUser();
    const { jar } = await signIn(email);
    await jar.post("/api/auth/two-factor/verify-totp", { code: await totp(secret), trustDevice: true });
    expect(jar.line(TRUST)).toMatch(
      /^identity\.trust_device=[\w-]{22}\.[\w-]{43}; Max-Age=2592000; Path=\/; Expires=.*; HttpOnly; SameSite=Lax$/,
    );
    const trust = jar.cookies.get(TRUST) ?? "";
    const stored = await kit.db.prisma.trustedDevice.findMany({ where: { user: { email } } });
    expect(stored).toHaveLength(1);
    expect(Buffer.from(stored[0]?.secretHash ?? []).toString("base64url")).not.toBe(trust.split(".")[1]);

    await jar.post("/api/auth/sign-out");
    const trusted = await signIn(email, jar);
    expect(trusted.res.body.session).toBeDefined();
    expect(jar.cookies.has(SESSION)).toBe(true);
    // Renewed: a new cookie; the old one no longer skips the second factor.
    expect(jar.cookies.get(TRUST)).not.toBe(trust);
    const stale = new Jar();
    stale.cookies.set(TRUST, trust);
    expect((await signIn(email, stale)).res.body.twoFactorRedirect).toBe(true);
    expect(stale.cookies.has(TRUST)).toBe(false);

    expect((await owner.post("/api/auth/two-factor/disable", { password: "wrong wrong" })).status).toBe(400);
    expect((await owner.post("/api/auth/two-factor/disable", { password: PASSWORD })).body).toEqual({ status: true });
    await kit.mailTo(email, "Two-factor authentication is off");
    expect(await kit.db.prisma.trustedDevice.count({ where: { user: { email } } })).toBe(0);
    expect(await kit.db.prisma.twoFactor.count({ where: { user: { email } } })).toBe(0);
    const plain = await signIn(email);
    expect(plain.res.body.user).toMatchObject({ email, twoFactorEnabled: false });
  });
});
