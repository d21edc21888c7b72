import { jwtClient, twoFactorClient } from "better-auth/client/plugins";
import { createLocalJWKSet, jwtVerify } from "jose";
import { generate } from "otplib";
import { describe, expect, it } from "vitest";
import { betterAuthServer, sessionWithJwt } from "./better-auth-kit.js";
import { type MailKit, mailKit } from "./mail-kit.js";

// better-auth's official client with its `twoFactorClient`, unchanged, against a real identity
// (real PostgreSQL, real SMTP to a catcher). A cookie jar stands in for the browser. The app's
// clock runs with real time plus an offset the test moves, so each TOTP code is in a new step.
let offset = 0;
const now = () => Date.now() + offset;
let kit: MailKit;
const server = betterAuthServer(async () => {
  kit = await mailKit({ now });
  return kit;
});

/** A better-auth client with its own cookie jar (one simulated browser); `redirects` records onTwoFactorRedirect. */
function browser() {
  const redirects: Array<string[] | undefined> = [];
  const twoFactor = twoFactorClient({ onTwoFactorRedirect: ({ twoFactorMethods }) => void redirects.push(twoFactorMethods) });
  return { ...server.browser([jwtClient(), twoFactor]), redirects };
}

const PASSWORD = "correct horse battery";
const totp = (secret: string) => generate({ secret, epoch: Math.floor(now() / 1000) });
const nextStep = () => {
  offset += 30_000;
};

describe("better-auth's twoFactorClient against identity", () => {
  it("enables TOTP, signs in through twoFactorRedirect and verifyTotp to a JWT, trusts the device, and turns it off", async () => {
    const email = `ba-2fa-${Date.now()}@example.com`;
    const b = browser();
    expect((await b.client.signUp.email({ email, password: PASSWORD, name: "Ba" })).error).toBeNull();

    const enabled = await b.client.twoFactor.enable({ password: PASSWORD });
    expect(enabled.error).toBeNull();
    const { totpURI, backupCodes } = enabled.data as { totpURI: string; backupCodes: string[] };
    expect(backupCodes).toHaveLength(10);
    const secret = new URL(totpURI).searchParams.get("secret") ?? "";
    const uri = await b.client.twoFactor.getTotpUri({ password: PASSWORD });
    expect(uri.data?.totpURI).toBe(totpURI);
    const confirmed = await b.client.twoFactor.verifyTotp({ code: await totp(secret) });
    expect(confirmed.error).toBeNull();
    expect(confirmed.data?.user).toMatchObject({ email, twoFactorEnabled: true });
    expect((await b.client.getSession()).data?.user.twoFactorEnabled).toBe(true);
    expect((await b.client.signOut()).error).toBeNull();

    // Sign-in: better-auth's twoFactorRedirect answer, its hook called, no session yet.
    const signedIn = await b.client.signIn.email({ email, password: PASSWORD });
    expect(signedIn.error).toBeNull();
    expect(signedIn.data).toEqual({ twoFactorRedirect: true, twoFactorMethods: ["totp", "otp"] });
    expect(b.redirects).toEqual([["totp", "otp"]]);
    expect(b.jar.has("identity.session_token")).toBe(false);
    expect(b.jar.has("identity.two_factor")).toBe(true);
    const waiting = await sessionWithJwt(b);
    expect([waiting.session.data, waiting.jwt]).toEqual([null, null]);

    nextStep();
    const verified = await b.client.twoFactor.verifyTotp({ code: await totp(secret), trustDevice: true });
    expect(verified.error).toBeNull();
    expect(verified.data).toMatchObject({ token: expect.any(String), user: { email } });
    const { session, jwt } = await sessionWithJwt(b);
    expect(session.data?.user.email).toBe(email);
    const jwks = await b.client.jwks();
    const { payload } = await jwtVerify(jwt ?? "", createLocalJWKSet(jwks.data as never), {
      issuer: kit.config.issuer,
      currentDate: new Date(now()),
    });
    expect(payload.sub).toBe(session.data?.user.id);

    // The trusted device signs in without a second factor next time.
    await b.client.signOut();
    const trusted = await b.client.signIn.email({ email, password: PASSWORD });
    expect(trusted.data).toMatchObject({ user: { email } });
    expect(b.redirects).toHaveLength(1);

    // A wrong code: better-auth's client reads the error code and message.
    const other = browser();
    await other.client.signIn.email({ email, password: PASSWORD });
    const wrong = await other.client.twoFactor.verifyTotp({ code: "000000" });
    expect(wrong.error).toMatchObject({ status: 401, code: "invalid_code", message: expect.any(String) });

    expect((await b.client.twoFactor.disable({ password: PASSWORD })).data).toEqual({ status: true });
    expect((await b.client.getSession()).data?.user.twoFactorEnabled).toBe(false);
    expect(b.jar.has("identity.trust_device")).toBe(false);
  });

  it("finishes sign-ins with backup codes (once each, new ones replace them) and with an emailed code", async () => {
    const email = `ba-2fa-codes-${Date.now()}@example.com`;
    const owner = browser();
    await owner.client.signUp.email({ email, password: PASSWORD, name: "Ba" });
    const enabled = await owner.client.twoFactor.enable({ password: PASSWORD });
    const { totpURI, backupCodes } = enabled.data as { totpURI: string; backupCodes: string[] };
    nextStep();
    await owner.client.twoFactor.verifyTotp({ code: await totp(new URL(totpURI).searchParams.get("secret") ?? "") });

    const first = browser();
    await first.client.signIn.email({ email, password: PASSWORD });
    const used = await first.client.twoFactor.verifyBackupCode({ code: backupCodes[0] ?? "" });
    expect(used.error).toBeNull();
    expect((await first.client.getSession()).data?.user.email).toBe(email);
    const second = browser();
    await second.client.signIn.email({ email, password: PASSWORD });
    expect((await second.client.twoFactor.verifyBackupCode({ code: backupCodes[0] ?? "" })).error).toMatchObject({
      status: 401,
      code: "invalid_code",
    });

    const regenerated = await owner.client.twoFactor.generateBackupCodes({ password: PASSWORD });
    expect(regenerated.data).toMatchObject({ status: true, backupCodes: expect.any(Array) });
    expect((await second.client.twoFactor.verifyBackupCode({ code: backupCodes[1] ?? "" })).error?.code).toBe("invalid_code");
    expect((await second.client.twoFactor.verifyBackupCode({ code: regenerated.data?.backupCodes[0] ?? "" })).error).toBeNull();

    const mailed = browser();
    await mailed.client.signIn.email({ email, password: PASSWORD });
    expect((await mailed.client.twoFactor.sendOtp()).data).toEqual({ status: true });
    const code = /\b(\d{6})\b/.exec((await kit.mailTo(email, "Your sign-in verification code")).text)?.[1] ?? "";
    expect((await mailed.client.twoFactor.verifyOtp({ code })).error).toBeNull();
    expect((await mailed.client.getSession()).data?.user.email).toBe(email);
  });
});
