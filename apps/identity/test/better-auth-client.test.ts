import { inferAdditionalFields, jwtClient } from "better-auth/client/plugins";
import { createLocalJWKSet, jwtVerify } from "jose";
import { describe, expect, it } from "vitest";
import { betterAuthServer } from "./better-auth-kit.js";
import { linkOf, type MailKit, mailKit } from "./mail-kit.js";

// better-auth's official client, unchanged, against a real identity listening on a free port,
// with mail over real SMTP to a catcher. It runs in Node, so a cookie jar stands in for the browser.

let kit: MailKit;
const server = betterAuthServer(async () => {
  kit = await mailKit();
  return kit;
});

/** A better-auth client with its own cookie jar (one simulated browser). */
function browser() {
  // The session field update-session sets, declared as better-auth's clients declare additional fields.
  const fields = inferAdditionalFields({ session: { userAgent: { type: "string", required: false } } });
  return server.browser([jwtClient(), fields]);
}
const { open } = server;

const PASSWORD = "correct horse battery";

describe("better-auth's client against identity", () => {
  it("drives every account flow, with error.code and error.message on its errors", async () => {
    const email = `ba-${Date.now()}@example.com`;
    const b = browser();

    // get-session without a session: data null and no error, as against better-auth itself.
    const none = await b.client.getSession();
    expect(none.data).toBeNull();
    expect(none.error).toBeNull();

    const up = await b.client.signUp.email({
      email,
      password: PASSWORD,
      name: "Ba",
      image: "https://img.example.com/ba.png",
      callbackURL: "/",
    });
    expect(up.error).toBeNull();
    expect(up.data?.user.email).toBe(email);
    const taken = await b.client.signUp.email({ email, password: PASSWORD, name: "Ba" });
    expect(taken.error).toMatchObject({ status: 409, code: "email_taken", message: expect.any(String) });

    let session = await b.client.getSession();
    expect(session.data?.user).toMatchObject({ email, emailVerified: false, image: "https://img.example.com/ba.png" });

    // jwks (jwtClient plugin) and the JWT plugin's /token.
    const jwks = await b.client.jwks();
    expect(jwks.data?.keys.length).toBeGreaterThan(0);
    const token = await b.client.$fetch<{ token: string }>("/token", { method: "GET" });
    const { payload } = await jwtVerify(token.data?.token ?? "", createLocalJWKSet(jwks.data as never), { issuer: kit.config.issuer });
    expect(payload.sub).toBe(session.data?.user.id);

    // Verification: the sign-up mail's link, asked again through the client (no second mail within a minute).
    expect((await b.client.sendVerificationEmail({ email, callbackURL: "/" })).data).toMatchObject({ status: true });
    const verifyToken = new URL(linkOf(await kit.mailTo(email, "Verify"))).searchParams.get("token") ?? "";
    const verified = await b.client.verifyEmail({ query: { token: verifyToken } });
    expect(verified.error).toBeNull();
    session = await b.client.getSession();
    expect(session.data?.user.emailVerified).toBe(true);

    const updated = await b.client.updateUser({ name: "Ba Renamed", image: "https://img.example.com/2.png" });
    expect(updated.error).toBeNull();
    expect((await b.client.getSession()).data?.user.name).toBe("Ba Renamed");

    // Sessions: a second browser, listed, revoked; then everyone else.
    const phone = browser();
    expect((await phone.client.signIn.email({ email, password: PASSWORD, rememberMe: false, callbackURL: "/" })).error).toBeNull();
    const third = browser();
    await third.client.signIn.email({ email, password: PASSWORD });
    const listed = await b.client.listSessions();
    expect(listed.data).toHaveLength(3);
    const [phoneId, phoneSecret] = [...phone.jar.values()][0]?.split(".") ?? [];
    const phoneRow = listed.data?.find((s) => s.id === phoneId);
    // The row's token is an opaque handle (the session's id), never the cookie's secret.
    expect(phoneRow?.token).toBe(phoneId);
    expect(JSON.stringify(listed.data)).not.toContain(phoneSecret);
    expect((await b.client.revokeSession({ token: phoneRow?.token ?? "" })).error).toBeNull();
    expect((await phone.client.getSession()).data).toBeNull();
    expect((await b.client.revokeOtherSessions()).error).toBeNull();
    expect((await third.client.getSession()).data).toBeNull();

    // update-session sets this session's userAgent; revoke-sessions ends every session, this one too.
    const renamed = await b.client.updateSession({ userAgent: "Ba laptop" });
    expect(renamed.error).toBeNull();
    expect(renamed.data?.session).toMatchObject({ userAgent: "Ba laptop", userId: session.data?.user.id });
    expect((await b.client.listSessions()).data?.[0]?.userAgent).toBe("Ba laptop");
    const fourth = browser();
    await fourth.client.signIn.email({ email, password: PASSWORD });
    expect((await fourth.client.revokeSessions()).data).toEqual({ status: true });
    expect((await fourth.client.getSession()).data).toBeNull();
    expect((await b.client.getSession()).data).toBeNull();
    expect((await b.client.signIn.email({ email, password: PASSWORD })).error).toBeNull();
    expect((await b.client.$fetch("/ok", { method: "GET" })).data).toEqual({ ok: true });

    const badChange = await b.client.changePassword({ currentPassword: "wrong wrong", newPassword: "next password 1" });
    expect(badChange.error).toMatchObject({ status: 400, code: "invalid_password", message: expect.any(String) });
    const changed = await b.client.changePassword({ currentPassword: PASSWORD, newPassword: "next password 1", revokeOtherSessions: true });
    expect(changed.error).toBeNull();

    // Email change: the current address confirms (its link, opened in this signed-in browser),
    // then the new address's link makes the change.
    const newEmail = `ba-new-${Date.now()}@example.com`;
    expect((await b.client.changeEmail({ newEmail, callbackURL: "/" })).data).toEqual({ status: true });
    expect((await open(b, linkOf(await kit.mailTo(email, "Confirm the change")))).status).toBe(200);
    expect((await b.client.getSession()).data?.user.email).toBe(email);
    expect((await open(b, linkOf(await kit.mailTo(newEmail, "new email")))).status).toBe(302);
    expect((await b.client.getSession()).data?.user.email).toBe(newEmail);

    // Password reset: request, follow the link to the callback with the token, reset; sessions end.
    expect((await b.client.requestPasswordReset({ email: newEmail, redirectTo: "/reset-password" })).data).toMatchObject({ status: true });
    const hop = await open(b, linkOf(await kit.mailTo(newEmail, "Reset")));
    const resetToken = new URL(hop.headers.get("location") ?? "").searchParams.get("token") ?? "";
    expect(resetToken).not.toBe("");
    expect((await b.client.resetPassword({ newPassword: "after reset pw", token: resetToken })).error).toBeNull();
    expect((await b.client.getSession()).data).toBeNull();

    const wrong = await b.client.signIn.email({ email: newEmail, password: "next password 1" });
    expect(wrong.error).toMatchObject({ status: 401, code: "invalid_credentials", message: "invalid email or password" });
    expect((await b.client.signIn.email({ email: newEmail, password: "after reset pw" })).error).toBeNull();
    expect((await b.client.signOut()).error).toBeNull();
    expect((await b.client.getSession()).data).toBeNull();

    // Deletion.
    await b.client.signIn.email({ email: newEmail, password: "after reset pw" });
    const refused = await b.client.deleteUser({ password: "not it" });
    expect(refused.error).toMatchObject({ status: 400, code: "invalid_password" });
    const deleted = await b.client.deleteUser({ password: "after reset pw" });
    expect(deleted.data).toMatchObject({ success: true });
    expect((await b.client.getSession()).data).toBeNull();
    const gone = await b.client.signIn.email({ email: newEmail, password: "after reset pw" });
    expect(gone.error?.code).toBe("invalid_credentials");
  });

  it("deletes with the password, or without it by the mailed link a session gets", async () => {
    const signedUp = async (label: string) => {
      const b = browser();
      const email = `ba-${label}-${Date.now()}@example.com`;
      const up = await b.client.signUp.email({ email, password: PASSWORD, name: "Ba" });
      expect(up.error).toBeNull();
      return { b, email, userId: up.data?.user.id ?? "" };
    };
    const staleSessions = (userId: string) =>
      kit.db.prisma.session.updateMany({ where: { userId }, data: { createdAt: new Date(Date.now() - 25 * 60 * 60 * 1000) } });

    // A fresh session of an account with a password: the cookie alone only mails the link; the password deletes.
    const fresh = await signedUp("fresh");
    expect((await fresh.b.client.deleteUser()).data).toEqual({ success: true, message: "Verification email sent" });
    expect((await fresh.b.client.getSession()).data?.user.id).toBe(fresh.userId);
    expect((await fresh.b.client.deleteUser({ password: PASSWORD })).data).toEqual({ success: true, message: "User deleted" });
    expect((await fresh.b.client.getSession()).data).toBeNull();

    // Stale: the link is mailed; opened in the signed-in browser it deletes and goes to the callback.
    const linked = await signedUp("link");
    await staleSessions(linked.userId);
    const callbackURL = "http://localhost:5173/goodbye";
    expect((await linked.b.client.deleteUser({ callbackURL })).data).toEqual({ success: true, message: "Verification email sent" });
    expect((await linked.b.client.getSession()).data?.user.id).toBe(linked.userId);
    const hop = await open(linked.b, linkOf(await kit.mailTo(linked.email, "Confirm deleting your account")));
    expect([hop.status, hop.headers.get("location")]).toEqual([302, callbackURL]);
    expect((await linked.b.client.getSession()).data).toBeNull();

    // Stale: the mailed link's token, sent back through deleteUser({ token }).
    const tokened = await signedUp("token");
    await staleSessions(tokened.userId);
    expect((await tokened.b.client.deleteUser()).data?.message).toBe("Verification email sent");
    const token = new URL(linkOf(await kit.mailTo(tokened.email, "Confirm deleting your account"))).searchParams.get("token") ?? "";
    const wrong = await tokened.b.client.deleteUser({ token: `${token.slice(0, -1)}${token.endsWith("A") ? "B" : "A"}` });
    expect(wrong.error).toMatchObject({ status: 400, code: "invalid_token" });
    expect((await tokened.b.client.deleteUser({ token })).data).toEqual({ success: true, message: "User deleted" });
    expect((await tokened.b.client.getSession()).data).toBeNull();
    const gone = await tokened.b.client.signIn.email({ email: tokened.email, password: PASSWORD });
    expect(gone.error?.code).toBe("invalid_credentials");
  });
});
