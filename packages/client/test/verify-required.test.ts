import { AUTH_TOKEN_STORAGE_KEY } from "@app/contracts";
import { type MailCatcher, startMailCatcher } from "@app/mailer/catcher";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient, memoryStorage } from "../src/index.js";
import { cookieFetch, freshEmail, signInSignedIn, startStack } from "./helpers.js";

// Sign-up against a real identity started with REQUIRE_EMAIL_VERIFICATION=true, mailing through
// real SMTP to a catcher: sign-up signs nobody in (better-auth's `{ token: null, user }`), and the
// user signs in after following the mailed link, taken from the caught mail.
/** The web app's origin, trusted for callbacks (nothing serves it here: the test reads the redirects). */
const WEB = "http://localhost:5173";
let catcher: MailCatcher;
let env: Awaited<ReturnType<typeof startStack>>;
beforeAll(async () => {
  catcher = await startMailCatcher({ port: 0 });
  env = await startStack({
    SMTP_URL: catcher.url,
    MAIL_FROM: "Taskboard <no-reply@example.com>",
    REQUIRE_EMAIL_VERIFICATION: "true",
    CORS_ORIGINS: WEB,
  });
});
afterAll(async () => {
  await env?.stop();
  await catcher?.close();
});

const PASSWORD = "correct horse battery";

function browser() {
  const storage = memoryStorage();
  const jar = cookieFetch();
  return { client: createClient({ baseUrl: env.stack.baseUrl, storage, fetch: jar.fetch }), storage, jar };
}

describe("sign-up when a verified address is required", () => {
  it("answers verify_email without a session; the mailed link then lets the user sign in", async () => {
    const { client, storage, jar } = browser();
    const email = freshEmail("verify");
    const callbackURL = `${WEB}/?verified=1`;
    const result = await client.auth.signUp({ email, password: PASSWORD, name: "Verify Me", callbackURL });
    expect(result.status).toBe("verify_email");
    expect(result.user).toMatchObject({ email, name: "Verify Me", emailVerified: false });
    expect(result).not.toHaveProperty("token");
    expect(client.auth.token()).toBeNull();
    expect(storage.getItem(AUTH_TOKEN_STORAGE_KEY)).toBeNull();
    expect(jar.cookies.size).toBe(0);
    expect(jar.calls.get("/api/auth/get-session")).toBeUndefined();

    await expect(client.auth.signIn({ email, password: PASSWORD })).rejects.toMatchObject({ status: 403, code: "email_not_verified" });

    const mail = await catcher.waitFor((m) => m.to.includes(email) && m.links.some((l) => l.includes("/verify-email")), 15_000);
    const link = mail.links.find((l) => l.includes("/verify-email")) ?? "";
    // The link's GET shows the one-click page and changes nothing; the user types the password
    // there (the page's script posts it as JSON) and is sent back to the callback.
    const page = await fetch(link, { redirect: "manual" });
    expect(page.status).toBe(200);
    const action = new URL((/action="([^"]+)"/.exec(await page.text())?.[1] ?? "").replaceAll("&amp;", "&"), link);
    await expect(client.auth.signIn({ email, password: PASSWORD })).rejects.toMatchObject({ status: 403, code: "email_not_verified" });
    const click = await fetch(action, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ password: PASSWORD }),
    });
    expect(click.status).toBe(200);
    const { redirectTo } = (await click.json()) as { redirectTo: string };
    const back = new URL(redirectTo);
    expect(back.origin).toBe(WEB);
    expect(back.searchParams.get("verified")).toBe("1");
    expect(back.searchParams.get("error")).toBeNull();

    const signedIn = await signInSignedIn(client, { email, password: PASSWORD });
    expect(signedIn.user).toMatchObject({ email, emailVerified: true });
    expect(signedIn.token.split(".")).toHaveLength(3);
    expect(storage.getItem(AUTH_TOKEN_STORAGE_KEY)).toBe(signedIn.token);
    expect((await client.me()).id).toBe(signedIn.user.id);
  });

  it("answers a taken address the same way, signing nobody in", async () => {
    const email = freshEmail("taken");
    expect((await browser().client.auth.signUp({ email, password: PASSWORD, name: "First" })).status).toBe("verify_email");
    const second = browser();
    const again = await second.client.auth.signUp({ email, password: "another password 1", name: "Second" });
    expect(again).toMatchObject({ status: "verify_email", user: { email, name: "Second", emailVerified: false } });
    expect(second.client.auth.token()).toBeNull();
    expect(second.jar.cookies.size).toBe(0);
  });
});
