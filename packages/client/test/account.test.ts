import { type CaughtMail, type MailCatcher, startMailCatcher } from "@app/mailer/catcher";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiError, type AppClient, createClient, memoryStorage } from "../src/index.js";
import { cookieFetch, freshEmail, signInSignedIn, signUpSignedIn, startStack } from "./helpers.js";

// The SDK's account methods against a real identity that mails through real SMTP to a catcher;
// links are taken from the mails, never from the database.
/** The web app's origin (CORS_ORIGINS): where mailed links send the browser; nothing needs to answer there. */
const WEB = "http://localhost:5173";
let catcher: MailCatcher;
let env: Awaited<ReturnType<typeof startStack>>;
beforeAll(async () => {
  catcher = await startMailCatcher({ port: 0 });
  env = await startStack({ SMTP_URL: catcher.url, MAIL_FROM: "Taskboard <no-reply@example.com>", CORS_ORIGINS: WEB });
});
afterAll(async () => {
  await env?.stop();
  await catcher?.close();
});

const PASSWORD = "correct horse battery";

/** A client with a cookie jar of its own (a browser); `fetch` carries identity's cookies with `credentials: "include"`. */
function browserWithJar() {
  const jar = cookieFetch();
  return { client: createClient({ baseUrl: env.stack.baseUrl, storage: memoryStorage(), fetch: jar.fetch }), fetch: jar.fetch };
}

function browser(): AppClient {
  return browserWithJar().client;
}

async function signedUp() {
  const user = browserWithJar();
  const email = freshEmail("account");
  await signUpSignedIn(user.client, { email, password: PASSWORD, name: "Account Test", callbackURL: `${WEB}/?verified=1` });
  return { ...user, email };
}

/** The first link containing `part` of the first mail to `to` whose subject contains `subject`. */
async function linkFor(to: string, part: string, subject = ""): Promise<string> {
  const mail: CaughtMail = await catcher.waitFor(
    (m) => m.to.includes(to) && m.subject.includes(subject) && m.links.some((l) => l.includes(part)),
    15_000,
  );
  return mail.links.find((l) => l.includes(part)) ?? "";
}

/** Opens a mailed link without following the redirect (with a browser's cookies, if given); answers where it points. */
async function open(link: string, withCookies?: typeof fetch | ReturnType<typeof cookieFetch>["fetch"]): Promise<URL> {
  const response = withCookies
    ? await withCookies(link, { credentials: "include", redirect: "manual" })
    : await fetch(link, { redirect: "manual" });
  expect(response.status).toBe(302);
  return new URL(response.headers.get("location") ?? "", link);
}

/**
 * A mailed link opened by a mail scanner or in a browser without the account's session: the
 * one-click page. `afterGet` checks that the GET changed nothing; then the form's POST goes as a
 * browser sends it (the page's query, no body, the page's own origin), and its answer is returned
 * unfollowed.
 */
async function clickThrough(link: string, afterGet: (page: string) => Promise<void>): Promise<Response> {
  const page = await fetch(link, { redirect: "manual", headers: { accept: "text/html" } });
  expect(page.status).toBe(200);
  expect(page.headers.get("content-type")).toMatch(/^text\/html/);
  const html = await page.text();
  await afterGet(html);
  const action = /action="(\?[^"]+)"/.exec(html)?.[1]?.replaceAll("&amp;", "&") ?? "";
  expect(action).not.toBe("");
  return fetch(new URL(action, link), {
    method: "POST",
    headers: { origin: new URL(link).origin, accept: "text/html" },
    redirect: "manual",
  });
}

describe("account methods", () => {
  it("resets a forgotten password with the mailed link, and answers the same for unknown addresses", async () => {
    const { email } = await signedUp();
    const anon = browser();
    const redirectTo = `${env.stack.baseUrl}/reset-password`;
    expect(await anon.auth.requestPasswordReset({ email: freshEmail("nobody"), redirectTo })).toEqual({ status: true });
    expect(await anon.auth.requestPasswordReset({ email, redirectTo })).toEqual({ status: true });
    const landing = await open(await linkFor(email, "/reset-password/"));
    expect(landing.pathname).toBe("/reset-password");
    const token = landing.searchParams.get("token") ?? "";
    expect(token).not.toBe("");
    await expect(anon.auth.resetPassword({ newPassword: "a brand new password", token })).resolves.toEqual({ status: true });
    await expect(anon.auth.resetPassword({ newPassword: "another new password", token })).rejects.toMatchObject({ code: "invalid_token" });
    await expect(anon.auth.signIn({ email, password: PASSWORD })).rejects.toMatchObject({ code: "invalid_credentials" });
    expect((await signInSignedIn(anon, { email, password: "a brand new password" })).user.email).toBe(email);
  });

  it("verifies the address with the mailed link: a prefetch changes nothing, the user's own browser uses it; resending works", async () => {
    const { client, fetch: withCookies, email } = await signedUp();
    const session = await client.auth.getSession();
    expect(session?.user.emailVerified).toBe(false);
    expect(await client.auth.sendVerificationEmail({ email, callbackURL: `${WEB}/?verified=1` })).toEqual({ status: true });
    const link = await linkFor(email, "/verify-email", "Verify");
    // A mail scanner's GET: the one-click page, and the address stays unverified.
    const prefetch = await fetch(link, { redirect: "manual", headers: { accept: "text/html" } });
    expect(prefetch.status).toBe(200);
    await prefetch.body?.cancel();
    expect((await client.auth.currentSession())?.user.emailVerified).toBe(false);
    // Opened where the user is signed in, the link is used at once, and the session goes on.
    const landing = await open(link, withCookies);
    expect(landing.origin).toBe(WEB);
    expect(landing.searchParams.get("verified")).toBe("1");
    expect(landing.searchParams.get("error")).toBeNull();
    const after = await client.auth.currentSession();
    expect(after?.user.emailVerified).toBe(true);
    expect(after?.session.id).toBe(session?.session.id);
    expect(await browser().auth.currentSession()).toBeNull();
  });

  it("changes name and password", async () => {
    const { client, email } = await signedUp();
    expect((await client.auth.updateUser({ name: "Renamed" })).name).toBe("Renamed");
    await expect(client.auth.changePassword({ currentPassword: "wrong password", newPassword: "x".repeat(12) })).rejects.toMatchObject({
      status: 400,
      code: "invalid_password",
    });
    const changed = await client.auth.changePassword({ currentPassword: PASSWORD, newPassword: "changed password 1" });
    expect(changed.user.id).toBeTruthy();
    await expect(browser().auth.signIn({ email, password: PASSWORD })).rejects.toMatchObject({ code: "invalid_credentials" });
    expect((await signInSignedIn(browser(), { email, password: "changed password 1" })).user.email).toBe(email);
  });

  it("changes the email through both inboxes (each GET changes nothing, each click does), and the old inbox takes it back", async () => {
    const { client, email } = await signedUp();
    const next = freshEmail("moved");
    expect(await client.auth.changeEmail({ newEmail: next, callbackURL: `${WEB}/?email-changed=1` })).toEqual({ status: true });
    const emailNow = async () => (await client.auth.currentSession())?.user.email;

    // 1. The current inbox confirms: its page names the new address; the click sends that one its link.
    const confirmLink = await linkFor(email, "/verify-email", "Confirm the change");
    const confirmed = await clickThrough(confirmLink, async (page) => {
      expect(page).toContain(next);
      expect(await emailNow()).toBe(email);
    });
    expect(confirmed.status).toBe(200);
    expect(await confirmed.text()).toContain(`A link is on its way to ${next}`);

    // 2. The new inbox's link: its GET changes nothing; its click moves the account, the session stays.
    const moveLink = await linkFor(next, "/verify-email", "Confirm your new email");
    const moved = await clickThrough(moveLink, async () => {
      expect(await emailNow()).toBe(email);
    });
    expect(moved.status).toBe(303);
    expect(moved.headers.get("location")).toBe(`${WEB}/?email-changed=1`);
    expect(await emailNow()).toBe(next);
    expect((await client.auth.getSession())?.user.email).toBe(next); // the next JWT carries it
    await expect(browser().auth.signIn({ email, password: PASSWORD })).rejects.toMatchObject({ code: "invalid_credentials" });
    expect((await signInSignedIn(browser(), { email: next, password: PASSWORD })).user.email).toBe(next);

    // 3. The old inbox is told, with a link that takes the account back: its GET changes nothing
    //    (the session lives on), its click ends every session and the password.
    const revertLink = await linkFor(email, "/verify-email", "was changed");
    const reverted = await clickThrough(revertLink, async (page) => {
      expect(page).toContain(email);
      expect(await emailNow()).toBe(next);
    });
    expect(reverted.status).toBe(303);
    const reset = new URL(reverted.headers.get("location") ?? "");
    expect(`${reset.origin}${reset.pathname}`).toBe(`${WEB}/reset-password`);
    expect(await client.auth.getSession()).toBeNull();
    expect(client.auth.token()).toBeNull();
    await expect(browser().auth.signIn({ email, password: PASSWORD })).rejects.toMatchObject({ code: "invalid_credentials" });
    await expect(browser().auth.signIn({ email: next, password: PASSWORD })).rejects.toMatchObject({ code: "invalid_credentials" });
    // Whoever clicked chooses the new password with the token the redirect carries.
    const token = reset.searchParams.get("token") ?? "";
    expect(await browser().auth.resetPassword({ token, newPassword: "taken back at last" })).toEqual({ status: true });
    expect((await signInSignedIn(browser(), { email, password: "taken back at last" })).user.email).toBe(email);
  });

  it("lists sessions, revokes one and all others, then deletes the account", async () => {
    const { client, email } = await signedUp();
    const second = browser();
    const third = browser();
    await second.auth.signIn({ email, password: PASSWORD });
    await third.auth.signIn({ email, password: PASSWORD });
    const sessions = await client.auth.listSessions();
    expect(sessions).toHaveLength(3);
    expect(sessions.filter((s) => s.current)).toHaveLength(1);
    const secondId = (await second.auth.listSessions()).find((s) => s.current)?.id ?? "";
    expect(await client.auth.revokeSession({ id: secondId })).toEqual({ status: true });
    expect(await second.auth.getSession()).toBeNull();
    expect(await client.auth.revokeOtherSessions()).toEqual({ status: true });
    expect(await third.auth.getSession()).toBeNull();
    expect((await client.auth.listSessions()).map((s) => s.current)).toEqual([true]);
    expect((await client.auth.fetchToken()).split(".")).toHaveLength(3);

    await expect(client.auth.deleteUser({ password: "not it at all" })).rejects.toMatchObject({ code: "invalid_password" });
    await client.auth.deleteUser({ password: PASSWORD });
    expect(client.auth.token()).toBeNull();
    expect(await client.auth.getSession()).toBeNull();
    const gone = await browser()
      .auth.signIn({ email, password: PASSWORD })
      .catch((e: unknown) => e);
    expect(gone).toBeInstanceOf(ApiError);
    expect(gone).toMatchObject({ code: "invalid_credentials" });
  });

  it("signed-out calls answer 401", async () => {
    await expect(browser().auth.listSessions()).rejects.toMatchObject({ status: 401, code: "unauthorized" });
  });
});
