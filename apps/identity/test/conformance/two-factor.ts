import { generate } from "otplib";
import { expect } from "vitest";
import type { ConformanceContext } from "./context.js";

/**
 * Answers every route of the feature (route-conformance.test.ts): enrolment with a TOTP code,
 * one sign-in finished with a backup code and one with an emailed code, then two-factor off.
 */
export async function drive(ctx: ConformanceContext): Promise<void> {
  const { expectJson, password } = ctx;
  const email = ctx.fresh("two-factor");
  const owner = ctx.client();
  await expectJson(await owner.post("/api/auth/sign-up/email", { email, password, name: "Two Factor" }));
  const enabled = await expectJson(await owner.post("/api/auth/two-factor/enable", { password }));
  const secret = new URL(String(enabled.totpURI)).searchParams.get("secret") ?? "";
  await expectJson(await owner.post("/api/auth/two-factor/get-totp-uri", { password }));
  await expectJson(await owner.post("/api/auth/two-factor/verify-totp", { code: await generate({ secret }) }));
  const codes = await expectJson(await owner.post("/api/auth/two-factor/generate-backup-codes", { password }));

  const withBackupCode = ctx.client();
  const pending = await expectJson(await withBackupCode.post("/api/auth/sign-in/email", { email, password }));
  expect(pending.twoFactorRedirect).toBe(true);
  const [backupCode] = codes.backupCodes as string[];
  await expectJson(await withBackupCode.post("/api/auth/two-factor/verify-backup-code", { code: backupCode }));

  const withMail = ctx.client();
  await expectJson(await withMail.post("/api/auth/sign-in/email", { email, password }));
  await expectJson(await withMail.post("/api/auth/two-factor/send-otp"));
  const mail = await ctx.mailTo(email, "Your sign-in verification code");
  const code = /\b(\d{6})\b/.exec(mail.text)?.[1];
  await expectJson(await withMail.post("/api/auth/two-factor/verify-otp", { code }));

  await expectJson(await owner.post("/api/auth/two-factor/disable", { password }));
}
