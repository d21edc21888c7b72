import { expect } from "vitest";
import { Browser } from "../oidc-kit.js";
import type { ConformanceContext } from "./context.js";

/** The six-digit code of a code mail. */
const codeOf = (text: string) => /^\d{6}$/m.exec(text)?.[0] ?? "";

/** Answers every route of sign-in by mail (route-conformance.test.ts): each once with success. */
export async function drive(ctx: ConformanceContext): Promise<void> {
  const { expectJson } = ctx;
  const mailAfter = (to: string, subject: string, after: number) =>
    ctx.catcher.waitFor((m) => m.id > after && m.to.includes(to) && m.subject.includes(subject));
  const lastId = () => ctx.catcher.messages().at(-1)?.id ?? 0;

  // Magic link: a new address; the link used by an API client's GET (better-auth's magicLink.verify).
  const linked = ctx.fresh("magic");
  const browser = ctx.client();
  expect(await expectJson(await browser.post("/api/auth/sign-in/magic-link", { email: linked, name: "Linked" }))).toEqual({ status: true });
  const first = new URL((await ctx.mailTo(linked, "Your sign-in link")).links[0] ?? "");
  const viaGet = await expectJson(await browser.get(`/api/auth/magic-link/verify?token=${first.searchParams.get("token")}`));
  expect(viaGet.user).toMatchObject({ email: linked, emailVerified: true, name: "Linked" });

  // The one click's POST, JSON from a script.
  let after = lastId();
  await expectJson(await browser.post("/api/auth/sign-in/magic-link", { email: linked }));
  const second = new URL((await mailAfter(linked, "Your sign-in link", after)).links[0] ?? "");
  const other = ctx.client(new Browser());
  const viaPost = await expectJson(await other.post("/api/auth/magic-link/verify", { token: second.searchParams.get("token") }));
  expect(viaPost.user).toMatchObject({ email: linked });

  // Emailed codes: sign-in (a new account), verification, check, reset by both request paths.
  const coded = ctx.fresh("otp");
  const otp = ctx.client();
  after = lastId();
  await expectJson(await otp.post("/api/auth/email-otp/send-verification-otp", { email: coded, type: "sign-in" }));
  const signInCode = codeOf((await mailAfter(coded, "Your sign-in code", after)).text);
  const signedIn = await expectJson(await otp.post("/api/auth/sign-in/email-otp", { email: coded, otp: signInCode }));
  expect(signedIn.user).toMatchObject({ email: coded, emailVerified: true });

  const unverified = ctx.fresh("otp-verify");
  const holder = ctx.client();
  await expectJson(await holder.post("/api/auth/sign-up/email", { email: unverified, password: ctx.password, name: "Holder" }));
  after = lastId();
  await expectJson(await holder.post("/api/auth/email-otp/send-verification-otp", { email: unverified, type: "email-verification" }));
  const verifyCode = codeOf((await mailAfter(unverified, "Your email verification code", after)).text);
  const checked = { email: unverified, type: "email-verification", otp: verifyCode };
  expect(await expectJson(await holder.post("/api/auth/email-otp/check-verification-otp", checked))).toEqual({ success: true });
  const verified = await expectJson(await holder.post("/api/auth/email-otp/verify-email", { email: unverified, otp: verifyCode }));
  expect(verified).toMatchObject({ status: true, token: null, user: { emailVerified: true } });

  for (const request of ["/api/auth/email-otp/request-password-reset", "/api/auth/forget-password/email-otp"]) {
    after = lastId();
    await expectJson(await holder.post(request, { email: unverified }));
    const resetCode = codeOf((await mailAfter(unverified, "Your password reset code", after)).text);
    const reset = { email: unverified, otp: resetCode, password: `${ctx.password} again` };
    expect(await expectJson(await holder.post("/api/auth/email-otp/reset-password", reset))).toEqual({ success: true });
  }
}
