import { randomBytes, randomUUID } from "node:crypto";
import request from "supertest";
import { afterAll, beforeAll, expect } from "vitest";
import { sessionCookie } from "./kit.js";
import { linkOf, type MailKit, mailKit } from "./mail-kit.js";

// What the tests of proving a mailbox share, by an emailed code (better-auth's emailOTP wire) or
// by a magic link: asking for either and reading it from the catcher, and a squatter's account
// for the pre-account takeover tests (docs/accounts.md "When the mailbox owner proves the address").

/** Mail limits high enough that a test mailing one address many times is never throttled. */
export const MAIL_LIMITS = { RATE_LIMIT_MAIL_IP_MAX: "100000", RATE_LIMIT_MAIL_ADDRESS_MAX: "100000", MAIL_BUDGET_PER_HOUR: "100000" };

/** The subject of the mail of each type of code. */
export const CODE_SUBJECTS = {
  "sign-in": "Your sign-in code",
  "email-verification": "Your email verification code",
  "forget-password": "Your password reset code",
};
export type CodeType = keyof typeof CODE_SUBJECTS;

export const SQUATTER_PASSWORD = "squatter password 1";

/** The part of `holdings` that proving the mailbox ends: none of it is left. */
export const NOTHING_LEFT = { passkeys: 0, twoFactor: 0, trustedDevices: 0, challenges: 0, links: 0 };

let n = 0;
/** A new address. */
export const fresh = (label: string) => `${label}-${++n}-${Date.now()}@example.com`;

/**
 * A mail kit (test/mail-kit.ts) with MAIL_LIMITS that starts before this file's tests and closes
 * after them. It is usable inside the tests: each property is read from the started kit.
 */
export function mailKitPerFile(options: { now?: () => number } = {}): MailKit {
  let started: MailKit | undefined;
  beforeAll(async () => {
    started = await mailKit({ ...options, env: MAIL_LIMITS });
  });
  afterAll(async () => {
    await started?.close();
  });
  return new Proxy({} as MailKit, {
    get(_target, key) {
      if (!started) throw new Error("mailbox-proof-kit: the mail kit starts in beforeAll");
      return Reflect.get(started, key);
    },
  });
}

/** Asking for codes and links, and the squatter's account, on `kit`. */
export function mailboxProof(kit: MailKit) {
  const lastId = () => kit.catcher.messages().at(-1)?.id ?? 0;
  const mailAfter = (after: number, to: string, subject: string) =>
    kit.catcher.waitFor((m) => m.id > after && m.to.includes(to) && m.subject === subject);
  const post = (path: string, body: object, cookie = "") => request(kit.app).post(`/api/auth${path}`).set("cookie", cookie).send(body);

  /** Asks for a code of `type` for `email` and returns the mailed code. */
  async function codeFor(email: string, type: CodeType): Promise<string> {
    const after = lastId();
    await post("/email-otp/send-verification-otp", { email, type }).expect(200, { success: true });
    const mail = await mailAfter(after, email, CODE_SUBJECTS[type]);
    return /^\d+$/m.exec(mail.text)?.[0] ?? "";
  }

  /** Asks for a magic link for `email` and returns the mailed link. */
  async function linkFor(email: string, extra: Record<string, unknown> = {}): Promise<string> {
    const after = lastId();
    await post("/sign-in/magic-link", { email, ...extra }).expect(200, { status: true });
    return linkOf(await mailAfter(after, email, "Your sign-in link"));
  }

  /** Whether `cookie` is a live session. */
  const signedIn = async (cookie: string) => (await request(kit.app).post("/api/auth/get-session").set("cookie", cookie)).status === 200;

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
      data: {
        id: randomUUID(),
        userId,
        credentialId: randomUUID(),
        publicKey: new Uint8Array(randomBytes(32)),
        deviceType: "singleDevice",
      },
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

  return { post, codeFor, linkFor, signedIn, squat, holdings };
}
