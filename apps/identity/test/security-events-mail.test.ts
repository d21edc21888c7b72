import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { sessionCookie } from "./kit.js";
import { linkOf, pathOf } from "./mail-kit.js";
import { fresh, mailboxProof, mailKitPerFile } from "./mailbox-proof-kit.js";
import { eventsOf, expectFromRequest, oneEvent, send, storedSince, webhooks } from "./security-events-kit.js";

// What a mailbox proves, through HTTP, real PostgreSQL and real SMTP to a catcher: sign-in by
// magic link and code (and the account they create), resets by link and code, verification, an
// email change and a deletion by its mailed link. Each records its event and webhooks, never the
// token, code or password it used.

const PASSWORD = "correct horse battery";
const kit = mailKitPerFile();
const { codeFor, linkFor } = mailboxProof(kit);

async function signUp(email = fresh("se-mail")) {
  const res = await send(kit.app, "post", "/api/auth/sign-up/email", { email, password: PASSWORD, name: "Mail" }).expect(200);
  return { email, userId: res.body.user.id as string, cookie: sessionCookie(res) ?? "", sessionId: res.body.session.id as string };
}

const verifiedUser = (email: string) =>
  kit.db.prisma.user.create({ data: { id: randomUUID(), email, name: "Verified", emailVerified: true } });

describe("magic links", () => {
  it("a new address: sign_up and sign_in by magic-link with their webhooks; a used link is a failed sign-in of nobody", async () => {
    const email = fresh("se-link");
    const link = await linkFor(email);
    const since = new Date();
    const res = await send(kit.app, "get", pathOf(link)).expect(200);
    const userId = res.body.user.id as string;
    expect((await eventsOf(kit.db.prisma, userId)).map((e) => [e.type, e.method])).toEqual([
      ["sign_up", "magic-link"],
      ["sign_in", "magic-link"],
    ]);
    for (const event of await eventsOf(kit.db.prisma, userId)) expectFromRequest(event);
    expect(await webhooks(kit.db.prisma, "user.created", { id: userId })).toEqual([
      expect.objectContaining({ email, emailVerified: true }),
    ]);
    expect(await webhooks(kit.db.prisma, "session.created", { id: res.body.session.id })).toHaveLength(1);

    const again = await send(kit.app, "get", pathOf(link));
    expect([again.status, again.body.code]).toEqual([400, "invalid_token"]);
    const failed = (await eventsOf(kit.db.prisma, null, ["sign_in_failed"])).filter((e) => e.createdAt >= since);
    expect(failed.map((e) => [e.method, e.outcome, e.detail])).toEqual([["magic-link", "failure", { reason: "invalid_token" }]]);
    const token = new URL(link).searchParams.get("token") ?? "";
    expect(await storedSince(kit.db.prisma, since)).not.toContain(token);
  });
});

describe("emailed codes", () => {
  it("sign_in by email-otp; a wrong code is a failed sign-in of the account, and no code is stored", async () => {
    const email = fresh("se-code");
    const user = await verifiedUser(email);
    const code = await codeFor(email, "sign-in");
    const since = new Date();
    const wrong = code === "000000" ? "111111" : "000000";
    const refused = await send(kit.app, "post", "/api/auth/sign-in/email-otp", { email, otp: wrong });
    expect([refused.status, refused.body.code]).toEqual([401, "invalid_code"]);
    const failed = await oneEvent(kit.db.prisma, user.id, "sign_in_failed");
    expectFromRequest(failed, "failure");
    expect(failed).toMatchObject({ method: "email-otp", detail: { reason: "invalid_code" } });

    await send(kit.app, "post", "/api/auth/sign-in/email-otp", { email, otp: code }).expect(200);
    expect((await oneEvent(kit.db.prisma, user.id, "sign_in")).method).toBe("email-otp");
    expect(await eventsOf(kit.db.prisma, user.id, ["sign_up", "email_verified"])).toEqual([]);
    const stored = await storedSince(kit.db.prisma, since);
    for (const secret of [code, wrong, email]) expect(stored).not.toContain(secret);
  });

  it("a reset code: password_reset by email-otp, the account's sessions revoked with their webhooks", async () => {
    const { email, userId, sessionId } = await signUp();
    await kit.db.prisma.user.update({ where: { id: userId }, data: { emailVerified: true } });
    const code = await codeFor(email, "forget-password");
    const since = new Date();
    await send(kit.app, "post", "/api/auth/email-otp/reset-password", { email, otp: code, password: "a new password 1" }).expect(200);
    const reset = await oneEvent(kit.db.prisma, userId, "password_reset");
    expectFromRequest(reset);
    expect(reset).toMatchObject({ method: "email-otp", detail: { sessionsEnded: 1 } });
    expect(await eventsOf(kit.db.prisma, userId, ["email_verified"])).toEqual([]);
    expect(await webhooks(kit.db.prisma, "session.revoked", { userId })).toEqual([{ id: sessionId, userId, reason: "password_reset" }]);
    const stored = await storedSince(kit.db.prisma, since);
    for (const secret of [code, "a new password 1"]) expect(stored).not.toContain(secret);
  });

  it("a code that proves an unverified address: email_verified by email-otp, the registrant's sessions revoked", async () => {
    const { email, userId, sessionId } = await signUp();
    const code = await codeFor(email, "sign-in");
    await send(kit.app, "post", "/api/auth/sign-in/email-otp", { email, otp: code }).expect(200);
    const verified = await oneEvent(kit.db.prisma, userId, "email_verified");
    expect(verified).toMatchObject({ method: "email-otp", detail: { signInsEnded: true } });
    expect(await webhooks(kit.db.prisma, "session.revoked", { userId })).toEqual([{ id: sessionId, userId, reason: "email_verified" }]);
    expect(await webhooks(kit.db.prisma, "user.updated", { id: userId, emailVerified: true })).toHaveLength(1);
  });
});

describe("mailed links", () => {
  it("a reset link: password_reset by link, email_verified with user.updated, session.revoked for the session ended", async () => {
    const { email, userId, sessionId } = await signUp();
    await send(kit.app, "post", "/api/auth/request-password-reset", { email }).expect(200);
    const token = linkOf(await kit.mailTo(email, "Reset your password")).match(/reset-password\/([\w-]{43})/)?.[1] ?? "";
    const since = new Date();
    await send(kit.app, "post", "/api/auth/reset-password", { token, newPassword: "a reset password 1" }).expect(200);
    const reset = await oneEvent(kit.db.prisma, userId, "password_reset");
    expectFromRequest(reset);
    expect(reset).toMatchObject({ method: "link", detail: { sessionsEnded: 1 } });
    await oneEvent(kit.db.prisma, userId, "email_verified");
    expect(await webhooks(kit.db.prisma, "session.revoked", { userId })).toEqual([{ id: sessionId, userId, reason: "password_reset" }]);
    expect(await webhooks(kit.db.prisma, "user.updated", { id: userId })).toEqual([expect.objectContaining({ emailVerified: true })]);
    const stored = await storedSince(kit.db.prisma, since);
    for (const secret of [token, "a reset password 1"]) expect(stored).not.toContain(secret);
  });

  it("a verification link used with the account's session: email_verified and user.updated, the session kept", async () => {
    const { email, userId, cookie } = await signUp();
    const token = new URL(linkOf(await kit.mailTo(email, "Verify"))).searchParams.get("token") ?? "";
    await send(kit.app, "post", "/api/auth/verify-email", { token }, cookie).expect(200);
    const verified = await oneEvent(kit.db.prisma, userId, "email_verified");
    expectFromRequest(verified);
    expect(verified).toMatchObject({ method: "link", detail: { signInsEnded: false } });
    expect(await webhooks(kit.db.prisma, "user.updated", { id: userId, emailVerified: true })).toHaveLength(1);
    expect(await webhooks(kit.db.prisma, "session.revoked", { userId })).toEqual([]);
  });

  it("an email change: email_changed once the new address's link is used, user.updated with the new address", async () => {
    const { email, userId, cookie } = await signUp();
    const newEmail = fresh("se-moved");
    await send(kit.app, "post", "/api/auth/change-email", { newEmail }, cookie).expect(200);
    const confirm = new URL(linkOf(await kit.mailTo(email, "Confirm the change"))).searchParams.get("token") ?? "";
    await send(kit.app, "post", "/api/auth/verify-email", { token: confirm }, cookie).expect(200);
    expect(await eventsOf(kit.db.prisma, userId, ["email_changed"])).toEqual([]);
    const move = new URL(linkOf(await kit.mailTo(newEmail, "Confirm your new email"))).searchParams.get("token") ?? "";
    await send(kit.app, "post", "/api/auth/verify-email", { token: move }, cookie).expect(200);
    const changed = await oneEvent(kit.db.prisma, userId, "email_changed");
    expectFromRequest(changed);
    expect(changed.detail).toBeNull();
    expect(await webhooks(kit.db.prisma, "user.updated", { id: userId, email: newEmail })).toHaveLength(1);
  });

  it("a deletion confirmed by its mailed link: account_deleted by link, with user.deleted", async () => {
    const { email, userId, cookie } = await signUp();
    const asked = await send(kit.app, "post", "/api/auth/delete-user", {}, cookie).expect(200);
    expect(asked.body.message).toBe("Verification email sent");
    expect(await eventsOf(kit.db.prisma, userId, ["account_deleted"])).toEqual([]);
    const link = linkOf(await kit.mailTo(email, "Confirm deleting your account"));
    await send(kit.app, "get", pathOf(link), undefined, cookie).expect(200);
    const deleted = await oneEvent(kit.db.prisma, userId, "account_deleted");
    expectFromRequest(deleted);
    expect(deleted.method).toBe("link");
    expect(await webhooks(kit.db.prisma, "user.deleted", { id: userId })).toEqual([{ id: userId }]);
  });
});
