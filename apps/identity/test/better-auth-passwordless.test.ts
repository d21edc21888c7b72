import { emailOTPClient, jwtClient, magicLinkClient } from "better-auth/client/plugins";
import { createLocalJWKSet, jwtVerify } from "jose";
import { describe, expect, it } from "vitest";
import { betterAuthServer } from "./better-auth-kit.js";
import { linkOf, type MailKit, mailKit } from "./mail-kit.js";
import { MAIL_LIMITS } from "./mailbox-proof-kit.js";

// better-auth's official client with its magicLink and emailOTP plugins, unchanged, against a
// real identity listening on a free port, with mail over real SMTP to a catcher. It runs in Node,
// so a cookie jar stands in for the browser.

let kit: MailKit;
const server = betterAuthServer(async () => {
  kit = await mailKit({ env: MAIL_LIMITS });
  return kit;
});

/** A better-auth client with its own cookie jar (one simulated browser). */
function browser() {
  return server.browser([jwtClient(), magicLinkClient(), emailOTPClient()]).client;
}
type Client = ReturnType<typeof browser>;

let n = 0;
const fresh = (label: string) => `ba-${label}-${++n}-${Date.now()}@example.com`;
const lastId = () => kit.catcher.messages().at(-1)?.id ?? 0;
const mailAfter = (to: string, subject: string, after: number) =>
  kit.catcher.waitFor((m) => m.id > after && m.to.includes(to) && m.subject === subject);
const codeOf = (text: string) => /^\d{6}$/m.exec(text)?.[0] ?? "";

/** get-session as the client reads it, and the JWT it carries in `set-auth-jwt`, verified against jwks. */
async function sessionWithJwt(client: Client) {
  let jwt = "";
  const session = await client.getSession({
    fetchOptions: {
      onSuccess: (ctx) => {
        jwt = ctx.response.headers.get("set-auth-jwt") ?? "";
      },
    },
  });
  const jwks = await client.jwks();
  const { payload } = await jwtVerify(jwt, createLocalJWKSet(jwks.data as never), { issuer: kit.config.issuer });
  return { user: session.data?.user, payload };
}

describe("better-auth's magicLink and emailOTP clients against identity", () => {
  it("signIn.magicLink, then the mailed link through magicLink.verify, signs in: get-session issues the JWT", async () => {
    const email = fresh("link");
    const client = browser();
    const after = lastId();
    const sent = await client.signIn.magicLink({ email, name: "Linked", callbackURL: "/" });
    expect(sent).toMatchObject({ data: { status: true }, error: null });
    const link = new URL(linkOf(await mailAfter(email, "Your sign-in link", after)));
    const verified = await client.magicLink.verify({ query: { token: link.searchParams.get("token") ?? "" } });
    expect(verified.error).toBeNull();
    expect(verified.data).toMatchObject({ user: { email, name: "Linked", emailVerified: true } });
    const { user, payload } = await sessionWithJwt(client);
    expect(user).toMatchObject({ email, emailVerified: true });
    expect(payload).toMatchObject({ sub: user?.id, email });

    const again = await browser().magicLink.verify({ query: { token: link.searchParams.get("token") ?? "" } });
    expect(again.error).toMatchObject({ status: 400, code: "invalid_token" });
  });

  it("emailOtp.sendVerificationOtp then signIn.emailOtp signs in; a wrong code is error.code invalid_code", async () => {
    const email = fresh("otp");
    const client = browser();
    const after = lastId();
    expect((await client.emailOtp.sendVerificationOtp({ email, type: "sign-in" })).data).toEqual({ success: true });
    const otp = codeOf((await mailAfter(email, "Your sign-in code", after)).text);
    const wrong = await client.signIn.emailOtp({ email, otp: otp === "000000" ? "111111" : "000000" });
    expect(wrong.error).toMatchObject({ status: 401, code: "invalid_code", message: expect.any(String) });
    const check = await client.emailOtp.checkVerificationOtp({ email, type: "sign-in", otp });
    expect(check.error).toMatchObject({ status: 400, code: "bad_request" }); // no account yet: better-auth's USER_NOT_FOUND
    const signedIn = await client.signIn.emailOtp({ email, otp });
    expect(signedIn.error).toBeNull();
    expect(signedIn.data).toMatchObject({ user: { email, emailVerified: true } });
    const { user, payload } = await sessionWithJwt(client);
    expect(payload.sub).toBe(user?.id);
  });

  it("emailOtp.verifyEmail verifies a signed-up address; emailOtp.resetPassword sets the password and signs out", async () => {
    const email = fresh("verify");
    const client = browser();
    expect((await client.signUp.email({ email, password: "first password 1", name: "Ba" })).error).toBeNull();
    let after = lastId();
    await client.emailOtp.sendVerificationOtp({ email, type: "email-verification" });
    const verifyCode = codeOf((await mailAfter(email, "Your email verification code", after)).text);
    const verified = await client.emailOtp.verifyEmail({ email, otp: verifyCode });
    expect(verified.error).toBeNull();
    expect(verified.data).toMatchObject({ status: true, token: null, user: { email, emailVerified: true } });
    expect((await client.getSession()).data?.user.emailVerified).toBe(true);

    for (const ask of [() => client.emailOtp.requestPasswordReset({ email }), () => client.forgetPassword.emailOtp({ email })]) {
      after = lastId();
      expect((await ask()).data).toEqual({ success: true });
      const resetCode = codeOf((await mailAfter(email, "Your password reset code", after)).text);
      const reset = await client.emailOtp.resetPassword({ email, otp: resetCode, password: "reset password 1" });
      expect(reset).toMatchObject({ data: { success: true }, error: null });
      expect((await client.getSession()).data).toBeNull();
    }
    expect((await client.signIn.email({ email, password: "first password 1" })).error?.code).toBe("invalid_credentials");
    expect((await client.signIn.email({ email, password: "reset password 1" })).error).toBeNull();
  });
});
