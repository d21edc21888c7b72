import { expect } from "vitest";
import type { ConformanceContext } from "./context.js";
import { grantAdmin } from "./database.js";

/**
 * Answers every route of the feature (route-conformance.test.ts): an admin lists, reads,
 * creates, changes, bans and unbans, manages sessions, impersonates and removes users.
 */
export async function drive(ctx: ConformanceContext): Promise<void> {
  const { expectJson, password } = ctx;
  const admin = ctx.client();
  const signedUp = await expectJson(await admin.post("/api/auth/sign-up/email", { email: ctx.fresh("admin"), password, name: "Admin" }));
  const adminId = (signedUp.user as { id: string }).id;
  await grantAdmin(adminId);
  const path = (route: string) => `/api/auth/admin/${route}`;

  const email = ctx.fresh("managed");
  const created = await expectJson(await admin.post(path("create-user"), { email, password, name: "Managed" }));
  const userId = (created.user as { id: string }).id;
  expect((await expectJson(await admin.get(path("list-users?limit=5&sortBy=createdAt&sortDirection=desc")))).total).toBeGreaterThan(1);
  await expectJson(await admin.get(path(`get-user?id=${userId}`)));
  await expectJson(await admin.post(path("update-user"), { userId, data: { name: "Managed Renamed" } }));
  await expectJson(await admin.post(path("set-role"), { userId, role: "admin" }));
  await expectJson(await admin.post(path("set-role"), { userId, role: "user" }));
  await expectJson(await admin.post(path("set-user-password"), { userId, newPassword: `${password} again` }));
  await expectJson(await admin.post(path("has-permission"), { permissions: { user: ["list"] } }));

  const user = ctx.client();
  await expectJson(await user.post("/api/auth/sign-in/email", { email, password: `${password} again` }));
  const sessions = await expectJson(await admin.post(path("list-user-sessions"), { userId }));
  const [session] = sessions.sessions as { token: string }[];
  await expectJson(await admin.post(path("revoke-user-session"), { sessionToken: session?.token }));
  await expectJson(await admin.post(path("revoke-user-sessions"), { userId }));
  await expectJson(await admin.post(path("ban-user"), { userId, banReason: "conformance", banExpiresIn: 60 }));
  await expectJson(await admin.post(path("unban-user"), { userId }));

  await expectJson(await admin.post(path("impersonate-user"), { userId }));
  await expectJson(await admin.post(path("stop-impersonating")));
  await expectJson(await admin.post(path("remove-user"), { userId }));
}
