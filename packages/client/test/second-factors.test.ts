import { type CaughtMail, type MailCatcher, startMailCatcher } from "@app/mailer/catcher";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AppClient, createClient, memoryStorage } from "../src/index.js";
import { cookieFetch, freshEmail, signInSignedIn, signUpSignedIn, startStack } from "./helpers.js";

// Sign-in by mail and second factors through the SDK, against a real identity that mails through
// real SMTP to a catcher: links and codes are taken from the caught mails, never from the database.
/** The web app's origin (CORS_ORIGINS): where mailed links send the browser; nothing answers there. */
const WEB = "http://localhost:5173";
const PASSWORD = "correct horse battery";
let catcher: MailCatcher;
let env: Awaited<ReturnType<typeof startStack>>;
beforeAll(async () => {
  catcher = await startMailCatcher({ port: 0 });
  env = await startStack({ SMTP_URL: catcher.url, MAIL_FROM: "Taskboard <no-reply@example.com>", CORS_ORIGINS: WEB });
});
afterAll(async () => {
  await env?.stop();
  await catcher?.close();
});

/** A client with its own cookie jar (a browser); `fetch` carries identity's cookies with `credentials: "include"`. */
function browser(): { client: AppClient; fetch: ReturnType<typeof cookieFetch>["fetch"] } {
  const jar = cookieFetch();
  return { client: createClient({ baseUrl: env.stack.baseUrl, storage: memoryStorage(), fetch: jar.fetch }), fetch: jar.fetch };
}

async function signedUp(prefix: string): Promise<string> {
  const email = freshEmail(prefix);
  await signUpSignedIn(browser().client, { email, password: PASSWORD, name: "Factor Test" });
  return email;
}

const used = new Set<number>();
/** The first mail to `to` with `subject` in its subject that this file has not read yet. */
async function mailTo(to: string, subject: string): Promise<CaughtMail> {
  const mail = await catcher.waitFor((m) => !used.has(m.id) && m.to.includes(to) && m.subject.includes(subject), 15_000);
  used.add(mail.id);
  return mail;
}

/** The one-time code a code mail shows. */
function codeOf(mail: CaughtMail): string {
  const code = /^\s*([A-Za-z0-9-]{6,})\s*$/m.exec(mail.text)?.[1];
  if (!code) throw new Error(`no code in the mail: ${mail.text}`);
  return code;
}

describe("sign-in by mail", () => {
  it("a magic link signs in where it is opened: its GET shows a page, its one click sets the cookie, get-session is step 2", async () => {
    const email = await signedUp("link");
    const { client, fetch: withJar } = browser();
    await client.auth.magicLink({ email, callbackURL: `${WEB}/` });
    // The same answer for an address without an account.
    await expect(browser().client.auth.magicLink({ email: freshEmail("nobody"), callbackURL: `${WEB}/` })).resolves.toBeUndefined();

    const link = (await mailTo(email, "sign-in link")).links.find((l) => l.includes("/magic-link/verify")) ?? "";
    const page = await withJar(link, { credentials: "include", headers: { accept: "text/html" }, redirect: "manual" });
    expect(page.status).toBe(200);
    const action = /action="([^"]+)"/.exec(await page.text())?.[1]?.replaceAll("&amp;", "&") ?? "";
    expect(await client.auth.getSession()).toBeNull();
    const click = await withJar(new URL(action, link).href, {
      method: "POST",
      credentials: "include",
      headers: { origin: new URL(link).origin, accept: "text/html" },
      redirect: "manual",
    });
    expect(click.status).toBe(303);
    expect(click.headers.get("location")).toBe(`${WEB}/`);
    const session = await client.auth.getSession();
    expect(session?.user.email).toBe(email);
    expect(session?.token.split(".")).toHaveLength(3);
  });

  it("an emailed code signs in once; a wrong one is invalid_code", async () => {
    const email = await signedUp("code");
    const { client } = browser();
    await client.auth.sendEmailOtp({ email });
    const code = codeOf(await mailTo(email, "sign-in code"));
    const wrong = code === "000000" ? "111111" : "000000";
    await expect(client.auth.signInEmailOtp({ email, otp: wrong })).rejects.toMatchObject({ status: 401, code: "invalid_code" });
    const result = await client.auth.signInEmailOtp({ email, otp: code });
    expect(result.status).toBe("signed_in");
    if (result.status !== "signed_in") return;
    expect(result.user.email).toBe(email);
    expect(client.auth.token()).toBe(result.token);
    await expect(browser().client.auth.signInEmailOtp({ email, otp: code })).rejects.toMatchObject({ code: "invalid_code" });
  });
});

describe("two-factor authentication", () => {
  it("emailed codes: sign-in answers two_factor, a mailed code finishes it and may trust the device; disable", async () => {
    const email = await signedUp("second");
    const owner = browser().client;
    await signInSignedIn(owner, { email, password: PASSWORD });
    expect(await owner.auth.twoFactor.enabled()).toBe(false);
    await expect(owner.auth.twoFactor.enableEmailCodes({ password: "not the password" })).rejects.toMatchObject({
      code: "invalid_password",
    });
    await owner.auth.twoFactor.enableEmailCodes({ password: PASSWORD });
    expect(await owner.auth.twoFactor.enabled()).toBe(true);
    // Backup codes come with an authenticator app (better-auth's rule), not with emailed codes.
    await expect(owner.auth.twoFactor.generateBackupCodes({ password: PASSWORD })).rejects.toMatchObject({
      code: "two_factor_not_enabled",
    });

    // The password alone opens no session: the answer names the factors, and no JWT is stored.
    const { client } = browser();
    const first = await client.auth.signIn({ email, password: PASSWORD });
    expect(first).toEqual({ status: "two_factor", methods: ["otp"] });
    expect(client.auth.token()).toBeNull();
    expect(await client.auth.getSession()).toBeNull();
    await client.auth.twoFactor.sendOtp();
    const code = codeOf(await mailTo(email, "verification code"));
    await expect(client.auth.twoFactor.verifyOtp({ code: code === "000000" ? "111111" : "000000" })).rejects.toMatchObject({
      status: 401,
      code: "invalid_code",
    });
    // "Trust this device": the next sign-in on this browser needs no second factor; another browser's does.
    const signedIn = await client.auth.twoFactor.verifyOtp({ code, trustDevice: true });
    expect(signedIn.user).toMatchObject({ email, twoFactorEnabled: true });
    expect(client.auth.token()).toBe(signedIn.token);
    await client.auth.signOut();
    expect((await client.auth.signIn({ email, password: PASSWORD })).status).toBe("signed_in");
    expect((await browser().client.auth.signIn({ email, password: PASSWORD })).status).toBe("two_factor");

    // Without a pending sign-in there is nothing to finish.
    await expect(browser().client.auth.twoFactor.verifyOtp({ code })).rejects.toMatchObject({ code: "invalid_two_factor_cookie" });

    await owner.auth.twoFactor.disable({ password: PASSWORD });
    expect(await owner.auth.twoFactor.enabled()).toBe(false);
    expect((await browser().client.auth.signIn({ email, password: PASSWORD })).status).toBe("signed_in");
  });

  it("an authenticator app's setup hands out the otpauth URI and backup codes; it is off until a first code verifies", async () => {
    const email = await signedUp("totp");
    const owner = browser().client;
    await signInSignedIn(owner, { email, password: PASSWORD });
    const setup = await owner.auth.twoFactor.enable({ password: PASSWORD });
    expect(setup.totpURI).toMatch(/^otpauth:\/\/totp\/.+\?(.+&)?secret=[A-Z2-7]+/);
    expect(setup.backupCodes.length).toBeGreaterThan(5);
    expect(await owner.auth.twoFactor.enabled()).toBe(false);
    await expect(owner.auth.twoFactor.verifyTotp({ code: "000000" })).rejects.toMatchObject({ code: "invalid_code" });
    // A wrong first code leaves the page signed in (invalid_code is no session end).
    expect(owner.auth.token()).not.toBeNull();
    expect((await browser().client.auth.signIn({ email, password: PASSWORD })).status).toBe("signed_in");
  });
});
