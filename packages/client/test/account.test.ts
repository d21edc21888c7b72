import { type CaughtMail, type MailCatcher, startMailCatcher } from "@app/mailer";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiError, type AppClient, createClient, memoryStorage } from "../src/index.js";
import { cookieFetch, freshEmail, signUpSignedIn, startStack } from "./helpers.js";

// The SDK's account methods against a real identity that mails through real SMTP to a catcher;
// links are taken from the mails, never from the database.
let catcher: MailCatcher;
let env: Awaited<ReturnType<typeof startStack>>;
beforeAll(async () => {
  catcher = await startMailCatcher({ port: 0 });
  env = await startStack({ SMTP_URL: catcher.url, MAIL_FROM: "Taskboard <no-reply@example.com>" });
});
afterAll(async () => {
  await env?.stop();
  await catcher?.close();
});

const PASSWORD = "correct horse battery";

function browser(): AppClient {
  return createClient({ baseUrl: env.stack.baseUrl, storage: memoryStorage(), fetch: cookieFetch().fetch });
}

async function signedUp(): Promise<{ client: AppClient; email: string }> {
  const client = browser();
  const email = freshEmail("account");
  await signUpSignedIn(client, { email, password: PASSWORD, name: "Account Test", callbackURL: `${env.stack.baseUrl}/?verified=1` });
  return { client, email };
}

/** The first link of the newest mail to `to` whose link contains `part`. */
async function linkFor(to: string, part: string): Promise<string> {
  const mail: CaughtMail = await catcher.waitFor((m) => m.to.includes(to) && m.links.some((l) => l.includes(part)), 15_000);
  return mail.links.find((l) => l.includes(part)) ?? "";
}

/** Opens a mailed link without following the redirect; answers where it points. */
async function open(link: string): Promise<URL> {
  const response = await fetch(link, { redirect: "manual" });
  expect(response.status).toBe(302);
  return new URL(response.headers.get("location") ?? "", link);
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
    expect((await anon.auth.signIn({ email, password: "a brand new password" })).user.email).toBe(email);
  });

  it("verifies the address with the mailed link; resending works", async () => {
    const { client, email } = await signedUp();
    expect((await client.auth.getSession())?.user.emailVerified).toBe(false);
    expect(await client.auth.sendVerificationEmail({ email, callbackURL: `${env.stack.baseUrl}/?verified=1` })).toEqual({ status: true });
    const landing = await open(await linkFor(email, "/verify-email"));
    expect(landing.searchParams.get("verified")).toBe("1");
    expect(landing.searchParams.get("error")).toBeNull();
    expect((await client.auth.currentSession())?.user.emailVerified).toBe(true);
    expect(await browser().auth.currentSession()).toBeNull();
  });

  it("changes name, password and email", async () => {
    const { client, email } = await signedUp();
    expect((await client.auth.updateUser({ name: "Renamed" })).name).toBe("Renamed");
    await expect(client.auth.changePassword({ currentPassword: "wrong password", newPassword: "x".repeat(12) })).rejects.toMatchObject({
      status: 400,
      code: "invalid_password",
    });
    const changed = await client.auth.changePassword({ currentPassword: PASSWORD, newPassword: "changed password 1" });
    expect(changed.user.id).toBeTruthy();
    const next = freshEmail("moved");
    expect(await client.auth.changeEmail({ newEmail: next, callbackURL: `${env.stack.baseUrl}/?email-changed=1` })).toEqual({
      status: true,
    });
    await open(await linkFor(next, "/verify-email"));
    expect((await client.auth.getSession())?.user.email).toBe(next);
    await expect(browser().auth.signIn({ email, password: "changed password 1" })).rejects.toMatchObject({ code: "invalid_credentials" });
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
