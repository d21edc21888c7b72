import { randomUUID } from "node:crypto";
import request from "supertest";
import { describe, expect, it } from "vitest";
import { identityKit, sessionCookie, signUp } from "./kit.js";
import { type CodeType, fresh, MAIL_LIMITS, mailboxProof, mailKitPerFile } from "./mailbox-proof-kit.js";

// Emailed codes (better-auth's emailOTP wire), through real PostgreSQL and real SMTP to a catcher:
// six digits, five minutes, three tries, one answer for every address; sign-in, verification and
// password reset with a code.
const MINUTE = 60 * 1000;

/** Moves the app's clock (expiry checks); 0 is real time. */
let offset = 0;
const kit = mailKitPerFile({ now: () => Date.now() + offset });
const { post, codeFor } = mailboxProof(kit);

const user = (email: string, emailVerified: boolean) =>
  kit.db.prisma.user.create({ data: { id: randomUUID(), email, name: "Known", emailVerified } });
const errorOf = (res: request.Response) => [res.status, res.body.code];

describe("asking for a code", () => {
  it("answers {success: true} for every type and address with the same statements; only the right addresses get mail", async () => {
    const quiet = await identityKit({ database: kit.database, mailer: kit.mailer, env: MAIL_LIMITS });
    try {
      const statements = async (email: string, type: CodeType) => {
        const before = quiet.db.queryCount();
        await request(quiet.app).post("/api/auth/email-otp/send-verification-otp").send({ email, type }).expect(200, { success: true });
        return quiet.db.queryCount() - before;
      };
      const unverified = await user(fresh("count-unverified"), false);
      const verified = await user(fresh("count-verified"), true);
      const cases: [string, CodeType, "pending" | "skipped"][] = [
        [fresh("count-unknown"), "sign-in", "pending"],
        [verified.email, "sign-in", "pending"],
        [unverified.email, "email-verification", "pending"],
        [verified.email, "email-verification", "skipped"],
        [fresh("count-ghost"), "email-verification", "skipped"],
        [verified.email, "forget-password", "pending"],
        [fresh("count-nobody"), "forget-password", "skipped"],
      ];
      const counts: number[] = [];
      for (const [email, type, state] of cases) {
        counts.push(await statements(email, type));
        const row = await quiet.db.prisma.mailOutbox.findFirst({
          where: { recipientKey: quiet.service.mailOutbox.recipientKey(email) },
          orderBy: { createdAt: "desc" },
        });
        // The file's own mail worker shares the database and may already be sending a queued row.
        const seen = row?.state === "sending" || row?.state === "sent" ? "pending" : row?.state;
        expect([email, type, seen]).toEqual([email, type, state]);
      }
      expect(new Set(counts).size, JSON.stringify(counts)).toBe(1);
    } finally {
      await quiet.close();
    }
  });

  it("mails six digits and stores only their HMAC", async () => {
    const email = fresh("digits");
    const code = await codeFor(email, "sign-in");
    expect(code).toMatch(/^\d{6}$/);
    const rows = await kit.db.prisma.$queryRaw<{ row: string }[]>`SELECT row_to_json(c)::text AS row FROM auth_challenge c`;
    expect(rows.map((r) => r.row).join("\n")).not.toContain(email);
    expect(kit.logs.join("")).not.toMatch(new RegExp(`\\b${code}\\b`));
  });

  it("refuses an unknown type and a bad address with 400, and answers 503 without SMTP_URL", async () => {
    expect(errorOf(await post("/email-otp/send-verification-otp", { email: fresh("t"), type: "change-email" }))).toEqual([
      400,
      "validation_failed",
    ]);
    expect(errorOf(await post("/email-otp/send-verification-otp", { email: "not-an-address", type: "sign-in" }))).toEqual([
      400,
      "validation_failed",
    ]);
    const noMail = await identityKit({ database: kit.database, env: MAIL_LIMITS });
    try {
      const res = await request(noMail.app)
        .post("/api/auth/email-otp/send-verification-otp")
        .send({ email: fresh("n"), type: "sign-in" });
      expect(errorOf(res)).toEqual([503, "mail_unavailable"]);
    } finally {
      await noMail.close();
    }
  });
});

describe("signing in with a code", () => {
  it("creates the account of a new address (verified, with its name) and signs in once", async () => {
    const email = fresh("new");
    const otp = await codeFor(email, "sign-in");
    const res = await post("/sign-in/email-otp", { email, otp, name: "Newly Made" }).expect(200);
    expect(res.body.user).toMatchObject({ email, name: "Newly Made", emailVerified: true });
    expect(res.body.session.userId).toBe(res.body.user.id);
    const session = await request(kit.app)
      .get("/api/auth/get-session")
      .set("cookie", sessionCookie(res) ?? "")
      .expect(200);
    expect(session.headers["set-auth-jwt"]).toBeTruthy();
    expect(errorOf(await post("/sign-in/email-otp", { email, otp }))).toEqual([401, "invalid_code"]);
  });

  it("signs an existing account in, and its password stays", async () => {
    const { body } = await signUp(kit.app);
    await kit.db.prisma.user.update({ where: { email: body.email }, data: { emailVerified: true } });
    const otp = await codeFor(body.email, "sign-in");
    await post("/sign-in/email-otp", { email: body.email, otp }).expect(200);
    await post("/sign-in/email", { email: body.email, password: body.password }).expect(200);
  });

  it("works for 5 minutes", async () => {
    const email = fresh("clock");
    try {
      let otp = await codeFor(email, "sign-in");
      offset = 5 * MINUTE - 1_000;
      await post("/sign-in/email-otp", { email, otp }).expect(200);
      offset = 0;
      otp = await codeFor(email, "sign-in");
      offset = 5 * MINUTE + 1;
      expect(errorOf(await post("/sign-in/email-otp", { email, otp }))).toEqual([400, "code_expired"]);
      expect(errorOf(await post("/sign-in/email-otp", { email, otp }))).toEqual([401, "invalid_code"]);
    } finally {
      offset = 0;
    }
  });

  it("allows three tries per code: after three wrong ones even the right code answers too_many_attempts", async () => {
    const email = fresh("tries");
    const otp = await codeFor(email, "sign-in");
    const wrong = otp === "000000" ? "111111" : "000000";
    for (let i = 0; i < 3; i++) expect(errorOf(await post("/sign-in/email-otp", { email, otp: wrong }))).toEqual([401, "invalid_code"]);
    expect(errorOf(await post("/sign-in/email-otp", { email, otp }))).toEqual([403, "too_many_attempts"]);
    expect(await kit.db.prisma.user.findUnique({ where: { email } })).toBeNull();
    // Concurrent guesses cannot take more than the three tries either.
    const next = await codeFor(email, "sign-in");
    const guesses = await Promise.all(
      Array.from({ length: 6 }, () => post("/sign-in/email-otp", { email, otp: next === "000000" ? "111111" : "000000" })),
    );
    expect(guesses.map(errorOf).filter(([, code]) => code === "invalid_code")).toHaveLength(3);
    expect(errorOf(await post("/sign-in/email-otp", { email, otp: next }))).toEqual([403, "too_many_attempts"]);
    // A new code starts again.
    await post("/sign-in/email-otp", { email, otp: await codeFor(email, "sign-in") }).expect(200);
  });

  it("replaces a code with the newer one; a code of one type does nothing for another", async () => {
    const email = fresh("replaced");
    const old = await codeFor(email, "sign-in");
    const current = await codeFor(email, "sign-in");
    if (old !== current) expect(errorOf(await post("/sign-in/email-otp", { email, otp: old }))).toEqual([401, "invalid_code"]);
    const known = await user(fresh("typed"), true);
    const reset = await codeFor(known.email, "forget-password");
    expect(errorOf(await post("/sign-in/email-otp", { email: known.email, otp: reset }))).toEqual([401, "invalid_code"]);
    await post("/sign-in/email-otp", { email, otp: current }).expect(200);
  });
});

describe("checking, verifying and resetting with a code", () => {
  it("check-verification-otp checks without using the code; a wrong one spends a try", async () => {
    const known = await user(fresh("check"), true);
    const otp = await codeFor(known.email, "forget-password");
    const check = (code: string) => post("/email-otp/check-verification-otp", { email: known.email, type: "forget-password", otp: code });
    for (let i = 0; i < 4; i++) await check(otp).expect(200, { success: true });
    expect(errorOf(await check(otp === "000000" ? "111111" : "000000"))).toEqual([401, "invalid_code"]);
    await post("/email-otp/reset-password", { email: known.email, otp, password: "a new password" }).expect(200, { success: true });
  });

  it("verify-email verifies the address of the session's own account and keeps its password and session", async () => {
    const { body, cookie } = await signUp(kit.app);
    const otp = await codeFor(body.email, "email-verification");
    const res = await post("/email-otp/verify-email", { email: body.email, otp }, cookie).expect(200);
    expect(res.body).toMatchObject({ status: true, token: null, user: { email: body.email, emailVerified: true } });
    expect(sessionCookie(res)).toBeUndefined();
    await request(kit.app).post("/api/auth/get-session").set("cookie", cookie).expect(200);
    await post("/sign-in/email", { email: body.email, password: body.password }).expect(200);
  });

  it("reset-password sets the password, verifies the address and signs every device out", async () => {
    const { body, cookie } = await signUp(kit.app);
    const other = sessionCookie(await post("/sign-in/email", { email: body.email, password: body.password }).expect(200)) ?? "";
    const otp = await codeFor(body.email, "forget-password");
    expect(errorOf(await post("/email-otp/reset-password", { email: body.email, otp, password: "short" }))).toEqual([
      400,
      "validation_failed",
    ]);
    await post("/email-otp/reset-password", { email: body.email, otp, password: "the reset password" }).expect(200, { success: true });
    for (const old of [cookie, other]) await request(kit.app).post("/api/auth/get-session").set("cookie", old).expect(401);
    expect(errorOf(await post("/sign-in/email", { email: body.email, password: body.password }))).toEqual([401, "invalid_credentials"]);
    const signedIn = await post("/sign-in/email", { email: body.email, password: "the reset password" }).expect(200);
    expect(signedIn.body.user.emailVerified).toBe(true);
    expect(errorOf(await post("/email-otp/reset-password", { email: body.email, otp, password: "again and again" }))).toEqual([
      401,
      "invalid_code",
    ]);
  });

  it("reset-password gives a provider-only account a password (a credential account) and keeps its provider link", async () => {
    const provided = await user(fresh("provider-only"), true);
    await kit.db.prisma.account.create({
      data: { id: randomUUID(), userId: provided.id, providerId: "local", accountId: `sub-${provided.id}` },
    });
    const otp = await codeFor(provided.email, "forget-password");
    await post("/email-otp/reset-password", { email: provided.email, otp, password: "first password ever" }).expect(200);
    const accounts = await kit.db.prisma.account.findMany({ where: { userId: provided.id } });
    expect(accounts.map((a) => a.providerId).sort()).toEqual(["credential", "local"]);
    await post("/sign-in/email", { email: provided.email, password: "first password ever" }).expect(200);
  });
});

describe("code limits", () => {
  it("limits asking per address and per IP, and using per IP", async () => {
    const strict = await identityKit({
      database: kit.database,
      mailer: kit.mailer,
      env: { RATE_LIMIT_MAIL_ADDRESS_MAX: "2", RATE_LIMIT_MAIL_IP_MAX: "100", RATE_LIMIT_IP_MAX: "3", MAIL_BUDGET_PER_HOUR: "100" },
    });
    try {
      const ask = (path: string, body: object) => request(strict.app).post(`/api/auth${path}`).send(body);
      const email = fresh("limited");
      expect((await ask("/email-otp/send-verification-otp", { email, type: "sign-in" })).status).toBe(200);
      expect((await ask("/email-otp/request-password-reset", { email })).status).toBe(200);
      // The mail routes share the per-address count, whatever the type.
      expect(errorOf(await ask("/email-otp/send-verification-otp", { email, type: "email-verification" }))).toEqual([429, "rate_limited"]);
      expect(errorOf(await ask("/sign-in/magic-link", { email }))).toEqual([429, "rate_limited"]);

      const guess = () => ask("/sign-in/email-otp", { email, otp: "123456" });
      for (let i = 0; i < 3; i++) expect((await guess()).status).not.toBe(429);
      expect(errorOf(await guess())).toEqual([429, "rate_limited"]);
    } finally {
      await strict.close();
    }
  });
});
