import { randomUUID } from "node:crypto";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signUp } from "./kit.js";
import { linkOf, type MailKit, mailKit } from "./mail-kit.js";

// What account recovery does to second factors and passkeys (docs/accounts.md "Second factors"):
// a reset ends passkeys and trusted devices (someone who knew the password may have added them)
// but keeps the second factor (a mailbox alone never turns it off); proving an address someone
// else registered ends everything, the second factor included. Real PostgreSQL and SMTP.
let kit: MailKit;

beforeAll(async () => {
  kit = await mailKit();
});
afterAll(async () => {
  await kit?.close();
});

/** Gives the user a passkey, a trusted device and an enabled TOTP factor, as rows. */
async function addFactors(userId: string): Promise<void> {
  const { prisma } = kit.db;
  await prisma.passkey.create({
    data: { id: randomUUID(), userId, credentialId: randomUUID(), publicKey: new Uint8Array([1, 2, 3]), deviceType: "singleDevice" },
  });
  await prisma.trustedDevice.create({
    data: { id: randomUUID(), userId, secretHash: new Uint8Array(32), expiresAt: new Date(Date.now() + 86_400_000) },
  });
  await prisma.twoFactor.create({ data: { userId, secret: "sealed", backupCodes: [] } });
  await prisma.user.update({ where: { id: userId }, data: { twoFactorEnabled: true } });
}

async function factorsOf(userId: string) {
  const { prisma } = kit.db;
  const [passkeys, trustedDevices, twoFactor, user] = await Promise.all([
    prisma.passkey.count({ where: { userId } }),
    prisma.trustedDevice.count({ where: { userId } }),
    prisma.twoFactor.count({ where: { userId } }),
    prisma.user.findUniqueOrThrow({ where: { id: userId } }),
  ]);
  return { passkeys, trustedDevices, twoFactor, twoFactorEnabled: user.twoFactorEnabled };
}

describe("account recovery and second factors", () => {
  it("a password reset ends passkeys and trusted devices and keeps the second factor", async () => {
    const { user, body } = await signUp(kit.app);
    await addFactors(user.id);
    await request(kit.app).post("/api/auth/request-password-reset").send({ email: body.email }).expect(200);
    const token = new URL(linkOf(await kit.mailTo(body.email, "Reset"))).pathname.split("/").pop() ?? "";
    await request(kit.app).post("/api/auth/reset-password").send({ token, newPassword: "a brand new password" }).expect(200);
    expect(await factorsOf(user.id)).toEqual({ passkeys: 0, trustedDevices: 0, twoFactor: 1, twoFactorEnabled: true });
  });

  it("proving an address someone else registered ends every factor, the second one included", async () => {
    const { user, body } = await signUp(kit.app);
    await addFactors(user.id);
    const link = new URL(linkOf(await kit.mailTo(body.email, "Verify your email address")));
    const token = link.searchParams.get("token") ?? "";
    // Another browser, without the session or the password: the mailbox owner, not the registrant.
    await request(kit.app).post("/api/auth/verify-email").set("accept", "application/json").send({ token }).expect(200);
    expect(await factorsOf(user.id)).toEqual({ passkeys: 0, trustedDevices: 0, twoFactor: 0, twoFactorEnabled: false });
  });
});
