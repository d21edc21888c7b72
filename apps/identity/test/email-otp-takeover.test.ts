import { describe, expect, it } from "vitest";
import { sessionCookie } from "./kit.js";
import { fresh, mailboxProof, mailKitPerFile, NOTHING_LEFT, SQUATTER_PASSWORD } from "./mailbox-proof-kit.js";

// Pre-account takeover (docs/accounts.md "When the mailbox owner proves the address"): whoever
// registered an address first keeps nothing once its owner proves the mailbox with an emailed
// code, as with the verification link opened without a session: the squatter's password,
// sessions, provider links, passkeys, second factor and pending links end, then the address is
// verified. Real PostgreSQL, real SMTP to a catcher.

const kit = mailKitPerFile();
const { post, codeFor, signedIn, squat, holdings } = mailboxProof(kit);

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
