import { expect } from "vitest";
import type { ConformanceContext } from "./context.js";
import { grantAdmin } from "./database.js";

/**
 * Answers every route of the feature (route-conformance.test.ts): a user reads their own
 * security events a page at a time, and an admin queries everyone's with filters.
 */
export async function drive(ctx: ConformanceContext): Promise<void> {
  const { expectJson, password } = ctx;
  const admin = ctx.client();
  const signedUp = await expectJson(await admin.post("/api/auth/sign-up/email", { email: ctx.fresh("events"), password, name: "Events" }));
  const adminId = (signedUp.user as { id: string }).id;

  // The first page of the user's own events (whatever identity recorded for the sign-up), then the next when there is one.
  const own = await expectJson(await admin.get("/api/auth/account-events?limit=1"));
  if (typeof own.nextCursor === "string") await expectJson(await admin.get(`/api/auth/account-events?cursor=${own.nextCursor}`));

  await grantAdmin(adminId);
  // An admin action is an event of the user it acts on, so the admins' query has one at least.
  const created = await expectJson(await admin.post("/api/auth/admin/create-user", { email: ctx.fresh("evented"), name: "Evented" }));
  const userId = (created.user as { id: string }).id;
  const page = await expectJson(await admin.get(`/api/auth/admin/events?userId=${userId}&type=sign_up,role_changed&outcome=success`));
  expect(page.events).toEqual([expect.objectContaining({ type: "sign_up", userId, actorId: adminId })]);
  await expectJson(await admin.get(`/api/auth/admin/events?limit=5&from=2020-01-01&actorId=${adminId}`));
}
