import { generate } from "otplib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AdminBrowser, type AdminStack, adminStack, expectStatus, freshEmail, PASSWORD, signUp } from "./admin-kit.js";
import { ORIGIN } from "./kit.js";
import { linkOf } from "./mail-kit.js";
import { SoftwareAuthenticator } from "./webauthn-authenticator.js";

// Bans on the real app: a banned user's sessions end at once, and every sign-in method answers
// 403 `banned` (password, provider through a real OpenID Provider, magic link, emailed code,
// passkey with a software authenticator, a second factor's completion); get-session and GET token
// issue nothing; a ban with an end lifts itself. The app's clock is real time plus an offset.
let offset = 0;
const now = () => Date.now() + offset;
let stack: AdminStack;
let admin: AdminBrowser;
let adminId: string;

beforeAll(async () => {
  stack = await adminStack({ now });
  admin = stack.browser();
  adminId = (await signUp(admin, freshEmail("admin"))).id;
  await stack.grantAdmin(adminId);
});
afterAll(async () => {
  await stack?.close();
});

const ban = async (userId: string, extra: Record<string, unknown> = {}) =>
  expectStatus(await admin.post("/api/auth/admin/ban-user", { userId, ...extra }), 200);
const refusedAsBanned = (answer: { status: number; body: Record<string, unknown> | null }) => [answer.status, answer.body?.code];
const signInByPassword = (browser: AdminBrowser, email: string) => browser.post("/api/auth/sign-in/email", { email, password: PASSWORD });

describe("a ban", () => {
  it("ends every session at once; get-session and GET token then issue nothing; the password answers 403 banned", async () => {
    const user = stack.browser();
    const { id, email } = await signUp(user);
    const other = stack.browser();
    expectStatus(await signInByPassword(other, email), 200);
    expect((await user.session()).jwt).toBeTruthy();

    const banned = await ban(id, { banReason: "spam" });
    expect(banned.user).toMatchObject({ id, banned: true, banReason: "spam", banExpires: null });
    expect(await stack.kit.db.prisma.session.count({ where: { userId: id } })).toBe(0);
    for (const browser of [user, other]) {
      expect(await browser.session()).toEqual({ userId: null, jwt: null, impersonatedBy: null });
      expect((await browser.get("/api/auth/token")).status).toBe(401);
    }
    const refused = await signInByPassword(stack.browser(), email);
    expect(refusedAsBanned(refused)).toEqual([403, "banned"]);
    expect(JSON.stringify(refused.body)).not.toContain("spam");
    // A wrong password still answers as for anyone: the ban shows only to who proves the account.
    expect((await stack.browser().post("/api/auth/sign-in/email", { email, password: "not the password" })).status).toBe(401);

    expectStatus(await admin.post("/api/auth/admin/unban-user", { userId: id }), 200);
    expectStatus(await signInByPassword(stack.browser(), email), 200);
  });

  it("holds against a session that slipped in: a banned user's session is refused and deleted when met", async () => {
    const user = stack.browser();
    const { id } = await signUp(user);
    await stack.kit.db.prisma.user.update({ where: { id }, data: { banned: true } });
    expect((await user.session()).userId).toBeNull();
    expect(await stack.kit.db.prisma.session.count({ where: { userId: id } })).toBe(0);
  });

  it("refuses a provider sign-in: the callback redirects back with an error and sets no session", async () => {
    const browser = stack.browser();
    const email = freshEmail("provider");
    const account = { sub: `sub-${Date.now()}`, email, email_verified: true, name: "Provider User" };
    const viaProvider = async (b: AdminBrowser) => {
      stack.provider.loginAs(account);
      const started = expectStatus(
        await b.post("/api/auth/sign-in/social", { provider: "local", callbackURL: `${ORIGIN}/`, disableRedirect: true }),
        200,
      );
      return b.raw.follow(String(started.url), (u) => u.origin === ORIGIN);
    };
    expect((await viaProvider(browser)).searchParams.get("error")).toBeNull();
    const { userId } = await browser.session();
    await ban(userId ?? "");

    const again = stack.browser();
    const landed = await viaProvider(again);
    expect(landed.searchParams.get("error")).toBe("banned");
    expect(again.cookie("identity.session_token")).toBeUndefined();
    expect(await stack.kit.db.prisma.session.count({ where: { userId: userId ?? "" } })).toBe(0);
  });

  it("refuses a magic link and an emailed sign-in code", async () => {
    const user = stack.browser();
    const { id, email } = await signUp(user);
    await ban(id);
    const after = stack.kit.catcher.messages().at(-1)?.id ?? 0;
    expectStatus(await stack.browser().post("/api/auth/sign-in/magic-link", { email }), 200);
    const link = linkOf(await stack.kit.catcher.waitFor((m) => m.id > after && m.to.includes(email) && m.subject === "Your sign-in link"));
    const clicker = stack.browser();
    expect(refusedAsBanned(await clicker.get(link))).toEqual([403, "banned"]);
    expect(clicker.cookie("identity.session_token")).toBeUndefined();

    const before = stack.kit.catcher.messages().at(-1)?.id ?? 0;
    expectStatus(await stack.browser().post("/api/auth/email-otp/send-verification-otp", { email, type: "sign-in" }), 200);
    const mail = await stack.kit.catcher.waitFor((m) => m.id > before && m.to.includes(email) && /code/i.test(m.subject));
    const otp = /\b(\d{6})\b/.exec(mail.text)?.[1];
    expect(refusedAsBanned(await stack.browser().post("/api/auth/sign-in/email-otp", { email, otp }))).toEqual([403, "banned"]);
  });

  it("refuses a passkey sign-in", async () => {
    const user = stack.browser();
    const { id } = await signUp(user);
    const authenticator = new SoftwareAuthenticator("ES256", ORIGIN);
    const options = expectStatus(await user.get("/api/auth/passkey/generate-register-options"), 200);
    const registered = await user.post("/api/auth/passkey/verify-registration", {
      response: authenticator.registrationJSON(options as never),
    });
    expectStatus(registered, 200);
    await ban(id);

    const browser = stack.browser();
    const request = expectStatus(await browser.get("/api/auth/passkey/generate-authenticate-options"), 200);
    const answer = await browser.post("/api/auth/passkey/verify-authentication", {
      response: authenticator.authenticationJSON(request as never),
    });
    expect(refusedAsBanned(answer)).toEqual([403, "banned"]);
    expect(browser.cookie("identity.session_token")).toBeUndefined();
  });

  it("refuses at the first factor, and at a second factor's completion when the ban came in between", async () => {
    const user = stack.browser();
    const { id, email } = await signUp(user);
    const enabled = expectStatus(await user.post("/api/auth/two-factor/enable", { password: PASSWORD }), 200);
    const secret = new URL(String(enabled.totpURI)).searchParams.get("secret") ?? "";
    const totp = () => generate({ secret, epoch: Math.floor(now() / 1000) });
    expectStatus(await user.post("/api/auth/two-factor/verify-totp", { code: await totp() }), 200);

    const pending = stack.browser();
    expect(expectStatus(await signInByPassword(pending, email), 200).twoFactorRedirect).toBe(true);
    await ban(id);
    offset += 30_000;
    const completed = await pending.post("/api/auth/two-factor/verify-totp", { code: await totp() });
    expect(refusedAsBanned(completed)).toEqual([403, "banned"]);
    expect(pending.cookie("identity.session_token")).toBeUndefined();
    expect(refusedAsBanned(await signInByPassword(stack.browser(), email))).toEqual([403, "banned"]);
  });

  it("with banExpiresIn lifts itself once its end has passed (the row is cleared on the next sign-in)", async () => {
    const { id, email } = await signUp(stack.browser());
    const banned = await ban(id, { banExpiresIn: 3600 });
    const ends = Date.parse(String((banned.user as { banExpires: string }).banExpires));
    expect(Math.abs(ends - (now() + 3_600_000))).toBeLessThan(5_000);
    expect(refusedAsBanned(await signInByPassword(stack.browser(), email))).toEqual([403, "banned"]);
    offset += 3_600_000 + 1_000;
    const browser = stack.browser();
    expectStatus(await signInByPassword(browser, email), 200);
    expect((await browser.session()).jwt).toBeTruthy();
    expect(
      await stack.kit.db.prisma.user.findUnique({ where: { id }, select: { banned: true, banReason: true, banExpires: true } }),
    ).toEqual({
      banned: false,
      banReason: null,
      banExpires: null,
    });
  });

  it("is never one's own (400), needs a known user (404), bounds banExpiresIn (400); update-user's banned: true ends sessions too", async () => {
    expect(expectStatus(await admin.post("/api/auth/admin/ban-user", { userId: adminId }), 400).code).toBe("bad_request");
    expect(expectStatus(await admin.post("/api/auth/admin/ban-user", { userId: "nobody" }), 404).code).toBe("not_found");
    const user = stack.browser();
    const { id } = await signUp(user);
    for (const banExpiresIn of [0, -5, 1.5, "60", 400_000_000]) {
      expect((await admin.post("/api/auth/admin/ban-user", { userId: id, banExpiresIn })).status, String(banExpiresIn)).toBe(400);
    }
    const updated = expectStatus(
      await admin.post("/api/auth/admin/update-user", { userId: id, data: { banned: true, banReason: "abuse" } }),
      200,
    );
    expect(updated).toMatchObject({ banned: true, banReason: "abuse" });
    expect((await user.session()).userId).toBeNull();
    expect(await stack.kit.db.prisma.session.count({ where: { userId: id } })).toBe(0);
  });
});
