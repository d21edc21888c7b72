import { adminClient, jwtClient } from "better-auth/client/plugins";
import { createLocalJWKSet, jwtVerify } from "jose";
import { describe, expect, it } from "vitest";
import { grantAdmin, PASSWORD } from "./admin-kit.js";
import { betterAuthServer, sessionWithJwt as withJwt } from "./better-auth-kit.js";
import { identityKit, type Kit } from "./kit.js";

// better-auth's official client with its `adminClient`, unchanged, against a real identity (real
// PostgreSQL; the admin role granted in the API's user_role as `pnpm admin:grant` does). A
// cookie jar stands in for each browser.
let kit: Kit & { database: Parameters<typeof grantAdmin>[0] };
const server = betterAuthServer(async () => {
  kit = await identityKit();
  return kit;
});

/** A better-auth client with its own cookie jar (one simulated browser). */
const browser = () => server.browser([jwtClient(), adminClient()]);

/** get-session through the client (its data), with the JWT of its `set-auth-jwt` header. */
async function sessionWithJwt(b: ReturnType<typeof browser>) {
  const { session, jwt } = await withJwt(b);
  return { session: session.data, jwt };
}

describe("better-auth's adminClient against identity", () => {
  it("lists, creates, sets roles, bans, lists and revokes sessions, impersonates and removes users", async () => {
    const stamp = Date.now();
    const admin = browser();
    const signedUp = await admin.client.signUp.email({ email: `ba-admin-${stamp}@example.com`, password: PASSWORD, name: "Ba Admin" });
    const adminId = signedUp.data?.user.id ?? "";
    await grantAdmin(kit.database, adminId);

    // createUser, then listUsers finds it by search, with better-auth's role and ban fields.
    const email = `ba-managed-${stamp}@example.com`;
    const created = await admin.client.admin.createUser({ email, password: PASSWORD, name: "Managed", role: "user" });
    expect(created.error).toBeNull();
    const userId = created.data?.user.id ?? "";
    expect(created.data?.user).toMatchObject({ email, role: "user", banned: false });
    const listed = await admin.client.admin.listUsers({ query: { searchValue: `ba-managed-${stamp}`, limit: 10 } });
    expect(listed.error).toBeNull();
    expect(listed.data).toMatchObject({ total: 1, limit: 10, users: [{ id: userId, email, role: "user" }] });

    // setRole both ways; the user's own client sees it through the admin routes.
    const user = browser();
    expect((await user.client.signIn.email({ email, password: PASSWORD })).error).toBeNull();
    const promoted = await admin.client.admin.setRole({ userId, role: "admin" });
    expect(promoted.data?.user.role).toBe("admin");
    expect((await user.client.admin.listUsers({ query: { limit: 1 } })).error).toBeNull();
    expect((await admin.client.admin.setRole({ userId, role: "user" })).data?.user.role).toBe("user");
    const refused = await user.client.admin.listUsers({ query: { limit: 1 } });
    expect(refused.error).toMatchObject({ status: 403, code: "forbidden" });

    // listUserSessions and revokeUserSessions.
    const sessions = await admin.client.admin.listUserSessions({ userId });
    expect(sessions.data?.sessions).toHaveLength(1);
    expect((await admin.client.admin.revokeUserSessions({ userId })).data).toEqual({ success: true });
    expect((await user.client.getSession()).data).toBeNull();

    // banUser: sign-in answers better-auth's error shape with code `banned`; unbanUser lifts it.
    const banned = await admin.client.admin.banUser({ userId, banReason: "testing", banExpiresIn: 3600 });
    expect(banned.data?.user).toMatchObject({ banned: true, banReason: "testing" });
    const blocked = await user.client.signIn.email({ email, password: PASSWORD });
    expect(blocked.error).toMatchObject({ status: 403, code: "banned" });
    expect((await admin.client.admin.unbanUser({ userId })).data?.user).toMatchObject({ banned: false, banReason: null });
    expect((await user.client.signIn.email({ email, password: PASSWORD })).error).toBeNull();

    // impersonateUser: the client's session becomes the user's, its JWT names the admin in `act`;
    // stopImpersonating puts the admin's own session back.
    const impersonated = await admin.client.admin.impersonateUser({ userId });
    expect(impersonated.error).toBeNull();
    expect(impersonated.data?.session).toMatchObject({ userId, impersonatedBy: adminId });
    const acting = await sessionWithJwt(admin);
    expect(acting.session?.user.id).toBe(userId);
    const jwks = createLocalJWKSet((await admin.client.jwks()).data as never);
    const { payload } = await jwtVerify(acting.jwt ?? "", jwks, { issuer: kit.config.issuer, audience: kit.config.audience });
    expect([payload.sub, payload.act]).toEqual([userId, { sub: adminId }]);
    const stopped = await admin.client.admin.stopImpersonating();
    expect(stopped.error).toBeNull();
    const own = await sessionWithJwt(admin);
    expect(own.session?.user.id).toBe(adminId);
    expect((await jwtVerify(own.jwt ?? "", jwks, { issuer: kit.config.issuer })).payload.act).toBeUndefined();

    // removeUser: gone from the list, and its sign-in with it.
    expect((await admin.client.admin.removeUser({ userId })).data).toEqual({ success: true });
    const after = await admin.client.admin.listUsers({ query: { searchValue: `ba-managed-${stamp}` } });
    expect(after.data?.total).toBe(0);
    expect((await browser().client.signIn.email({ email, password: PASSWORD })).error).toMatchObject({ status: 401 });
  });

  it("gets and updates a user, sets a password, revokes one session and answers hasPermission", async () => {
    const stamp = Date.now();
    const admin = browser();
    const adminId = (await admin.client.signUp.email({ email: `ba-admin2-${stamp}@example.com`, password: PASSWORD, name: "A" })).data?.user
      .id;
    await grantAdmin(kit.database, adminId ?? "");
    const created = await admin.client.admin.createUser({ email: `ba-other-${stamp}@example.com`, name: "Other" });
    const userId = created.data?.user.id ?? "";

    expect((await admin.client.admin.getUser({ query: { id: userId } })).data).toMatchObject({ id: userId, name: "Other" });
    const updated = await admin.client.admin.updateUser({ userId, data: { name: "Renamed" } });
    expect(updated.data).toMatchObject({ id: userId, name: "Renamed" });
    expect((await admin.client.admin.setUserPassword({ userId, newPassword: "a fresh password" })).data).toEqual({ status: true });
    const user = browser();
    expect((await user.client.signIn.email({ email: `ba-other-${stamp}@example.com`, password: "a fresh password" })).error).toBeNull();
    const [listed] = (await admin.client.admin.listUserSessions({ userId })).data?.sessions ?? [];
    expect((await admin.client.admin.revokeUserSession({ sessionToken: listed?.token ?? "" })).data).toEqual({ success: true });
    expect((await user.client.getSession()).data).toBeNull();

    const allowed = await admin.client.admin.hasPermission({ permissions: { user: ["ban"], session: ["revoke"] } });
    expect(allowed.data).toEqual({ error: null, success: true });
  });
});
