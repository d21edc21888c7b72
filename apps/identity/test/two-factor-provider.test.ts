import { generate } from "otplib";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TWO_FACTOR_PAGE } from "../src/sign-in/finish.js";
import { identityKit, type Kit, ORIGIN, signUp } from "./kit.js";
import { Browser, providerStack, type TestProvider } from "./oidc-kit.js";

// A provider sign-in of a user with two-factor on, through a real OpenID Provider: the callback
// opens no session; it sends the browser to the web app's second-factor page with the pending
// cookie, and a second factor finishes the sign-in.
const CALLBACK = `${ORIGIN}/dashboard?tab=recent`;
const PASSWORD = "correct horse battery";

let baseUrl: string;
let provider: TestProvider;
let kit: Kit;
let stop: (() => Promise<void>) | undefined;

beforeAll(async () => {
  ({ baseUrl, provider, kit, close: stop } = await providerStack((env) => identityKit({ env })));
});
afterAll(() => stop?.());

const post = (browser: Browser, path: string, body: unknown = {}) =>
  browser.request(`${baseUrl}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: ORIGIN },
    body: JSON.stringify(body),
  });

describe("provider sign-in with two-factor on", () => {
  it("redirects to the second-factor page with the pending cookie and the callback URL; a backup code finishes it", async () => {
    const { cookie, body, user } = await signUp(kit.app);
    const enabled = await request(kit.app)
      .post("/api/auth/two-factor/enable")
      .set("cookie", cookie)
      .send({ password: PASSWORD })
      .expect(200);
    const secret = new URL(enabled.body.totpURI).searchParams.get("secret") ?? "";
    await request(kit.app)
      .post("/api/auth/two-factor/verify-totp")
      .set("cookie", cookie)
      .send({ code: await generate({ secret }) })
      .expect(200);
    // The owner proved the address, so the provider's verified identity with it reaches the account.
    await kit.db.prisma.user.update({ where: { id: user.id }, data: { emailVerified: true } });

    const browser = new Browser();
    provider.loginAs({ sub: `sub-2fa-${Date.now()}`, email: body.email, email_verified: true, name: "Two Factor" });
    const started = await post(browser, "/api/auth/sign-in/social", { provider: "local", callbackURL: CALLBACK, disableRedirect: true });
    const { url } = (await started.json()) as { url: string };
    const landed = await browser.follow(url, (u) => u.origin === ORIGIN);
    expect(landed.origin + landed.pathname).toBe(`${ORIGIN}${TWO_FACTOR_PAGE}`);
    expect(landed.searchParams.get("callbackURL")).toBe(CALLBACK);
    expect(browser.cookie(baseUrl, "identity.session_token")).toBeUndefined();
    expect(browser.cookie(baseUrl, "identity.two_factor")).toMatch(/^[\w-]{43}$/);
    expect(await (await browser.request(`${baseUrl}/api/auth/get-session`)).json()).toBeNull();
    expect(await kit.db.prisma.session.count({ where: { userId: user.id } })).toBe(1);

    const [backupCode] = enabled.body.backupCodes as string[];
    const verified = await post(browser, "/api/auth/two-factor/verify-backup-code", { code: backupCode });
    expect(verified.status).toBe(200);
    expect(browser.cookie(baseUrl, "identity.two_factor")).toBeUndefined();
    const session = await browser.request(`${baseUrl}/api/auth/get-session`);
    expect(((await session.json()) as { user: { id: string } }).user.id).toBe(user.id);
    expect(session.headers.get("set-auth-jwt")).toBeTruthy();
  });
});
