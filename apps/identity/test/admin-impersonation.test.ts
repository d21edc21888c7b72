import { createVerifier, type Verifier } from "@app/auth-verify";
import { IMPERSONATION_MAX_SECONDS, jwtActorClaimSchema } from "@app/contracts";
import { decodeJwt } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ADMIN_SESSION_COOKIE,
  type AdminBrowser,
  type AdminStack,
  adminStack,
  expectStatus,
  freshEmail,
  PASSWORD,
  SESSION_COOKIE,
  signUp,
} from "./admin-kit.js";

// Impersonation on the real app: the admin's session waits in `identity.admin_session` while the
// session cookie holds an hour-long, never-sliding session of the user; its JWTs carry
// `act: { sub: <admin> }` and packages/auth-verify's verifier accepts them. The app's clock is
// real time plus an offset; the verifier runs on the same clock.
let offset = 0;
const now = () => Date.now() + offset;
let stack: AdminStack;
let verifier: Verifier;
let admin: AdminBrowser;
let adminId: string;
/** A second admin, who watches while the first one impersonates. */
let observer: AdminBrowser;

beforeAll(async () => {
  stack = await adminStack({ now });
  verifier = createVerifier({
    jwksUrl: `${stack.baseUrl}/api/auth/jwks`,
    issuer: stack.kit.config.issuer,
    audience: stack.kit.config.audience,
    now,
  });
  admin = stack.browser();
  adminId = (await signUp(admin, freshEmail("admin"))).id;
  await stack.grantAdmin(adminId);
  observer = stack.browser();
  await stack.grantAdmin((await signUp(observer, freshEmail("observer"))).id);
});
afterAll(async () => {
  verifier?.close();
  await stack?.close();
});

const impersonate = (userId: string) => admin.post("/api/auth/admin/impersonate-user", { userId });

describe("impersonation", () => {
  it("puts an hour-long session of the user on the cookie, keeps the admin's in admin_session, and stop restores it", async () => {
    const { id: userId } = await signUp(stack.browser());
    const adminToken = admin.cookie(SESSION_COOKIE);
    const started = expectStatus(await impersonate(userId), 200);
    const session = started.session as { id: string; userId: string; impersonatedBy: string; expiresAt: string };
    expect(session).toMatchObject({ userId, impersonatedBy: adminId });
    expect(Date.parse(session.expiresAt) - now()).toBeLessThanOrEqual(IMPERSONATION_MAX_SECONDS * 1000);
    expect(Date.parse(session.expiresAt) - now()).toBeGreaterThan(IMPERSONATION_MAX_SECONDS * 1000 - 60_000);
    expect(started.user).toMatchObject({ id: userId, role: "user" });
    expect(admin.cookie(ADMIN_SESSION_COOKIE)).toBe(adminToken);
    expect(admin.cookie(SESSION_COOKIE)?.split(".")[0]).toBe(session.id);

    const current = await admin.session();
    expect([current.userId, current.impersonatedBy]).toEqual([userId, adminId]);
    // Acting as a user is no admin: the admin routes refuse the impersonation session.
    expect((await admin.get("/api/auth/admin/list-users")).status).toBe(403);
    const listed = expectStatus(await observer.post("/api/auth/admin/list-user-sessions", { userId }), 200);
    expect(listed.sessions).toContainEqual(expect.objectContaining({ id: session.id, impersonatedBy: adminId }));

    const stopped = expectStatus(await admin.post("/api/auth/admin/stop-impersonating"), 200);
    expect(stopped.user).toMatchObject({ id: adminId, role: "admin" });
    expect(admin.cookie(SESSION_COOKIE)).toBe(adminToken);
    expect(admin.cookie(ADMIN_SESSION_COOKIE)).toBeUndefined();
    expect(await stack.kit.db.prisma.session.count({ where: { id: session.id } })).toBe(0);
    const back = await admin.session();
    expect([back.userId, back.impersonatedBy]).toEqual([adminId, null]);
    expect(decodeJwt(back.jwt ?? "").act).toBeUndefined();
  });

  it("issues JWTs naming the admin in act (get-session and GET token), which the API's verifier accepts", async () => {
    const { id: userId } = await signUp(stack.browser());
    expectStatus(await impersonate(userId), 200);
    const { jwt } = await admin.session();
    const fromToken = String(expectStatus(await admin.get("/api/auth/token"), 200).token);
    for (const token of [jwt ?? "", fromToken]) {
      const verified = await verifier.verifyToken(token);
      expect(verified.userId).toBe(userId);
      expect(jwtActorClaimSchema.parse(verified.claims.act)).toEqual({ sub: adminId });
    }
    expectStatus(await admin.post("/api/auth/admin/stop-impersonating"), 200);
    const own = await verifier.verifyToken(String(expectStatus(await admin.get("/api/auth/token"), 200).token));
    expect([own.userId, own.claims.act]).toEqual([adminId, undefined]);
  });

  it("never slides and ends after the hour: get-session then answers null and issues no JWT", async () => {
    const { id: userId } = await signUp(stack.browser());
    const started = expectStatus(await impersonate(userId), 200);
    const expiresAt = (started.session as { expiresAt: string }).expiresAt;
    offset += 30 * 60_000;
    expect((await admin.session()).userId).toBe(userId);
    const row = await stack.kit.db.prisma.session.findFirst({ where: { userId, impersonatedBy: adminId } });
    expect(row?.expiresAt.toISOString()).toBe(expiresAt);
    offset += 30 * 60_000 + 1_000;
    expect(await admin.session()).toEqual({ userId: null, jwt: null, impersonatedBy: null });
    // The admin's own session waits in its cookie; stop-impersonating needs a session to end.
    expect((await admin.post("/api/auth/admin/stop-impersonating")).status).toBe(401);
    admin.raw.setCookie(stack.baseUrl, SESSION_COOKIE, admin.cookie(ADMIN_SESSION_COOKIE) ?? "");
    expect((await admin.session()).userId).toBe(adminId);
  });

  it("refuses to impersonate an admin (403), a banned user (403 banned) or nobody (404), and stop without an impersonation (400)", async () => {
    const { id: otherAdmin } = await signUp(stack.browser());
    await stack.grantAdmin(otherAdmin);
    expect(expectStatus(await impersonate(otherAdmin), 403).code).toBe("forbidden");
    expect(expectStatus(await impersonate(adminId), 403).code).toBe("forbidden");
    const { id: banned } = await signUp(stack.browser());
    expectStatus(await admin.post("/api/auth/admin/ban-user", { userId: banned }), 200);
    expect(expectStatus(await impersonate(banned), 403).code).toBe("banned");
    expect(expectStatus(await impersonate("nobody"), 404).code).toBe("not_found");
    expect(expectStatus(await admin.post("/api/auth/admin/stop-impersonating"), 400).code).toBe("bad_request");
    expect((await admin.session()).userId).toBe(adminId);
  });

  it("ends the impersonation even when the admin's session is gone, asking the admin to sign in again (401)", async () => {
    const { id: userId } = await signUp(stack.browser());
    const impersonation = (expectStatus(await impersonate(userId), 200).session as { id: string }).id;
    await stack.kit.db.prisma.session.deleteMany({ where: { id: admin.cookie(ADMIN_SESSION_COOKIE)?.split(".")[0] ?? "" } });
    expect(expectStatus(await admin.post("/api/auth/admin/stop-impersonating"), 401).code).toBe("unauthorized");
    expect([admin.cookie(SESSION_COOKIE), admin.cookie(ADMIN_SESSION_COOKIE)]).toEqual([undefined, undefined]);
    expect(await stack.kit.db.prisma.session.count({ where: { id: impersonation } })).toBe(0);
  });

  it("leaves the user's own credentials to the user: an impersonation session changes none of them, and the user's list hides it", async () => {
    const admin = stack.browser();
    await stack.grantAdmin((await signUp(admin, freshEmail("second-admin"))).id);
    const user = stack.browser();
    const { id: userId } = await signUp(user);
    expectStatus(await admin.post("/api/auth/admin/impersonate-user", { userId }), 200);
    const refused = async (res: Parameters<typeof expectStatus>[0]) => expectStatus(res, 403).code;
    for (const [path, body] of [
      ["/api/auth/change-password", { currentPassword: PASSWORD, newPassword: "an admin's choice 1" }],
      ["/api/auth/change-email", { newEmail: freshEmail("taken-over") }],
      ["/api/auth/delete-user", { password: PASSWORD }],
      ["/api/auth/two-factor/enable", { password: PASSWORD }],
      ["/api/auth/link-social", { provider: "local", callbackURL: "http://localhost:5173/" }],
      ["/api/auth/passkey/verify-registration", { response: {} }],
    ] as const) {
      expect(await refused(await admin.post(path, body)), path).toBe("forbidden");
    }
    expect(await refused(await admin.get("/api/auth/passkey/generate-register-options"))).toBe("forbidden");
    // Reading is the admin's to do; the user's own list shows only the user's sessions.
    expect((await admin.get("/api/auth/list-sessions")).status).toBe(200);
    const own = expectStatus(await user.get("/api/auth/list-sessions"), 200) as unknown as { impersonatedBy?: string | null }[];
    expect(Array.isArray(own) ? own.length : -1).toBe(1);
    expectStatus(await admin.post("/api/auth/admin/stop-impersonating"), 200);
  });
});
