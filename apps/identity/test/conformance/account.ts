import { expect } from "vitest";
import type { ConformanceContext } from "./context.js";

/**
 * Answers the account routes the owner's flow in route-conformance.test.ts leaves out: better-auth's
 * /ok, update-session, revoke-sessions, delete-user without the password and the mailed deletion link.
 */
export async function drive(ctx: ConformanceContext): Promise<void> {
  expect(await ctx.expectJson(await ctx.client().get("/api/auth/ok"))).toEqual({ ok: true });

  const email = ctx.fresh("account-routes");
  const owner = ctx.client();
  const up = await ctx.expectJson(await owner.post("/api/auth/sign-up/email", { email, password: ctx.password, name: "Routes" }));
  const user = up.user as { id: string; email: string };
  const updated = await ctx.expectJson(await owner.post("/api/auth/update-session", { userAgent: "Conformance laptop" }));
  expect(updated.session).toMatchObject({ userId: user.id, userAgent: "Conformance laptop" });

  const other = ctx.client();
  await ctx.expectJson(await other.post("/api/auth/sign-in/email", { email, password: ctx.password }));
  expect(await ctx.expectJson(await other.post("/api/auth/revoke-sessions"))).toEqual({ status: true });
  expect((await owner.get("/api/auth/list-sessions")).status).toBe(401);

  // The deletion link, as a stale session's delete-user mails it (account-fixes-*.test.ts drives that path).
  await ctx.expectJson(await owner.post("/api/auth/sign-in/email", { email, password: ctx.password }));
  await ctx.built.service.recovery.confirmDeletion(user, undefined);
  const link = new URL((await ctx.mailTo(email, "Confirm deleting your account")).links[0] ?? "");
  expect(await ctx.expectJson(await owner.get(`${link.pathname}${link.search}`))).toEqual({ success: true, message: "User deleted" });

  // Without the password, an account that has one gets the confirmation link mailed, even on a fresh session.
  const second = ctx.client();
  const secondEmail = ctx.fresh("account-fresh");
  await ctx.expectJson(await second.post("/api/auth/sign-up/email", { email: secondEmail, password: ctx.password, name: "Fresh" }));
  expect(await ctx.expectJson(await second.post("/api/auth/delete-user", {}))).toEqual({
    success: true,
    message: "Verification email sent",
  });
}
