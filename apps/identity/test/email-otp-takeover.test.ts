import { randomBytes, randomUUID } from "node:crypto";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sessionCookie } from "./kit.js";
import { type MailKit, mailKit } from "./mail-kit.js";

// Pre-account takeover (docs/accounts.md "When the mailbox owner proves the address"): whoever
// registered an address first keeps nothing once its owner proves the mailbox with an emailed
// code, as with the verification link opened without a session: the squatter's password,
// sessions, provider links, passkeys, second factor and pending links end, then the address is
// verified. Real PostgreSQL, real SMTP to a catcher.
const LIMITS = { RATE_LIMIT_MAIL_IP_MAX: "100000", RATE_LIMIT_MAIL_ADDRESS_MAX: "100000", MAIL_BUDGET_PER_HOUR: "100000" };
const SQUATTER_PASSWORD = "squatter password 1";
const SUBJECTS = {
  "sign-in": "Your sign-in code",
  "email-verification": "Your email verification code",
  "forget-password": "Your password reset code",
};

let kit: MailKit;
beforeAll(async () => {
  kit = await mailKit({ env: LIMITS });
});
afterAll(async () => {
  await kit?.close();
});

let n = 0;
const fresh = (label: string) => `${label}-${++n}-${Date.now()}@example.com`;
const post = (path: string, body: object, cookie = "") => request(kit.app).post(`/api/auth${path}`).set("cookie", cookie).send(body);
const signedIn = async (cookie: string) => (await request(kit.app).post("/api/auth/get-session").set("cookie", cookie)).status === 200;

async function codeFor(email: string, type: keyof typeof SUBJECTS): Promise<string> {
  const after = kit.catcher.messages().at(-1)?.id ?? 0;
  await post("/email-otp/send-verification-otp", { email, type }).expect(200);
  const mail = await kit.catcher.waitFor((m) => m.id > after && m.to.includes(email) && m.subject === SUBJECTS[type]);
  return /^\d{6}$/m.exec(mail.text)?.[0] ?? "";
}

/**
 * The squatter signs up first with someone else's address and holds a session, the password, a
 * provider link, a passkey, a second factor with a trusted device, a pending challenge and the
 * sign-up's pending verification link.
 */
async function squat(email: string) {
  const res = await post("/sign-up/email", { email, password: SQUATTER_PASSWORD, name: "Squatter" }).expect(200);
  const { id: userId } = res.body.user as { id: string };
  const { prisma } = kit.db;
  await prisma.account.create({ data: { id: randomUUID(), userId, providerId: "local", accountId: `squatter-${userId}` } });
  await prisma.passkey.create({
    data: { id: randomUUID(), userId, credentialId: randomUUID(), publicKey: new Uint8Array(randomBytes(32)), deviceType: "singleDevice" },
  });
  await prisma.twoFactor.create({ data: { userId, secret: "sealed-elsewhere", backupCodes: [] } });
  await prisma.user.update({ where: { id: userId }, data: { twoFactorEnabled: true } });
  await prisma.trustedDevice.create({
    data: { id: randomUUID(), userId, secretHash: new Uint8Array(randomBytes(32)), expiresAt: new Date(Date.now() + 86_400_000) },
  });
  await prisma.authChallenge.create({
    data: {
      id: randomUUID(),
      userId,
      purpose: "two-factor",
      subject: userId,
      secretHash: new Uint8Array(randomBytes(32)),
      expiresAt: new Date(Date.now() + 600_000),
    },
  });
  expect(await prisma.verification.count({ where: { userId } })).toBeGreaterThan(0);
  return { userId, cookie: sessionCookie(res) ?? "" };
}

/** What still opens the account. */
async function holdings(userId: string) {
  const { prisma } = kit.db;
  const where = { userId };
  return {
    user: await prisma.user.findUniqueOrThrow({ where: { id: userId }, select: { emailVerified: true, twoFactorEnabled: true } }),
    providers: (await prisma.account.findMany({ where })).map((a) => a.providerId).sort(),
    sessions: await prisma.session.count({ where }),
    passkeys: await prisma.passkey.count({ where }),
    twoFactor: await prisma.twoFactor.count({ where }),
    trustedDevices: await prisma.trustedDevice.count({ where }),
    challenges: await prisma.authChallenge.count({ where }),
    links: await prisma.verification.count({ where: { userId, NOT: { purpose: { startsWith: "spent:" } } } }),
  };
}

const NOTHING_LEFT = { passkeys: 0, twoFactor: 0, trustedDevices: 0, challenges: 0, links: 0 };

describe("an emailed code on an account whose address nobody proved", () => {
  it("sign-in code: the squatter keeps nothing; the owner gets in with the one session", async () => {
    const email = fresh("otp-owner");
    const squatter = await squat(email);
    const otp = await codeFor(email, "sign-in");
    const res = await post("/sign-in/email-otp", { email, otp }).expect(200);
    expect(res.body.user).toMatchObject({ id: squatter.userId, emailVerified: true });
    expect(await holdings(squatter.userId)).toEqual({
      user: { emailVerified: true, twoFactorEnabled: false },
      providers: [],
      sessions: 1,
      ...NOTHING_LEFT,
    });
    expect(await signedIn(squatter.cookie)).toBe(false);
    expect(await signedIn(sessionCookie(res) ?? "")).toBe(true);
    expect((await post("/sign-in/email", { email, password: SQUATTER_PASSWORD })).status).toBe(401);
  });

  it("verification code without the account's session: as the verification link, everything ends", async () => {
    const email = fresh("verify-owner");
    const squatter = await squat(email);
    const otp = await codeFor(email, "email-verification");
    // A session of another account proves nothing about this one.
    const stranger = await post("/sign-up/email", { email: fresh("stranger"), password: "stranger password", name: "S" }).expect(200);
    const res = await post("/email-otp/verify-email", { email, otp }, sessionCookie(stranger) ?? "").expect(200);
    expect(res.body).toMatchObject({ status: true, token: null, user: { emailVerified: true } });
    expect(await holdings(squatter.userId)).toEqual({
      user: { emailVerified: true, twoFactorEnabled: false },
      providers: [],
      sessions: 0,
      ...NOTHING_LEFT,
    });
    expect(await signedIn(squatter.cookie)).toBe(false);
  });

  it("reset code: the squatter keeps nothing; the owner's new password is the account's only sign-in", async () => {
    const email = fresh("reset-owner");
    const squatter = await squat(email);
    const otp = await codeFor(email, "forget-password");
    await post("/email-otp/reset-password", { email, otp, password: "the owner's password" }).expect(200);
    expect(await holdings(squatter.userId)).toEqual({
      user: { emailVerified: true, twoFactorEnabled: false },
      providers: ["credential"],
      sessions: 0,
      ...NOTHING_LEFT,
    });
    expect(await signedIn(squatter.cookie)).toBe(false);
    expect((await post("/sign-in/email", { email, password: SQUATTER_PASSWORD })).status).toBe(401);
    await post("/sign-in/email", { email, password: "the owner's password" }).expect(200);
  });

  it("on a verified address a code takes nothing away", async () => {
    const email = fresh("verified");
    const holder = await squat(email);
    await kit.db.prisma.user.update({ where: { id: holder.userId }, data: { emailVerified: true, twoFactorEnabled: false } });
    const otp = await codeFor(email, "sign-in");
    await post("/sign-in/email-otp", { email, otp }).expect(200);
    const left = await holdings(holder.userId);
    expect(left).toMatchObject({ providers: ["credential", "local"], sessions: 2, passkeys: 1, twoFactor: 1 });
    expect(await signedIn(holder.cookie)).toBe(true);
  });
});
