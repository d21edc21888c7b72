import { generate } from "otplib";
import { parseSetCookie } from "set-cookie-parser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { identityKit, ORIGIN } from "./kit.js";
import { eventsOf, expectFromRequest, oneEvent, send, storedSince } from "./security-events-kit.js";
import { SoftwareAuthenticator } from "./webauthn-authenticator.js";

// Second factors and passkeys through HTTP on real PostgreSQL: turning two-factor on and off,
// sign-ins finished by a TOTP code, a backup code or a trusted device (and a wrong code), passkeys
// added, used and removed. The app's clock is real time plus an offset moved a TOTP step at a time.

const PASSWORD = "correct horse battery";
let kit: Awaited<ReturnType<typeof identityKit>>;
let offset = 0;
let n = 0;

beforeAll(async () => {
  kit = await identityKit({ now: () => Date.now() + offset });
});
afterAll(async () => {
  await kit?.close();
});

/** One browser: the cookies identity set, sent back on every request (with the tests' user agent). */
class Jar {
  readonly cookies = new Map<string, string>();
  async send(method: "get" | "post", path: string, body?: object) {
    const header = [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
    const res = await send(kit.app, method, path, body, header);
    for (const c of parseSetCookie((res.headers["set-cookie"] ?? []) as unknown as string[])) {
      if (!c.value || (c.expires && c.expires.getTime() <= Date.now())) this.cookies.delete(c.name);
      else this.cookies.set(c.name, c.value);
    }
    return res;
  }
}

const totp = (secret: string) => generate({ secret, epoch: Math.floor((Date.now() + offset) / 1000) });
const nextStep = () => {
  offset += 30_000;
};

async function signedUp() {
  const jar = new Jar();
  const email = `se-factors-${++n}-${Date.now()}@example.com`;
  const res = await jar.send("post", "/api/auth/sign-up/email", { email, password: PASSWORD, name: "Factors" });
  expect(res.status, res.text).toBe(200);
  return { jar, email, userId: res.body.user.id as string };
}

const signIns = async (userId: string) => (await eventsOf(kit.db.prisma, userId, ["sign_in"])).map((e) => [e.method, e.detail]);

describe("two-factor", () => {
  it("records on and off, each sign-in with the second factor that finished it, and a wrong code as a failed sign-in", async () => {
    const { jar, email, userId } = await signedUp();
    const since = new Date();
    const enabled = await jar.send("post", "/api/auth/two-factor/enable", { password: PASSWORD });
    expect(enabled.status).toBe(200);
    const secret = new URL(enabled.body.totpURI).searchParams.get("secret") ?? "";
    const backupCodes = enabled.body.backupCodes as string[];
    expect(await eventsOf(kit.db.prisma, userId, ["two_factor_enabled"])).toEqual([]);
    await jar.send("post", "/api/auth/two-factor/verify-totp", { code: await totp(secret) }).then((r) => expect(r.status).toBe(200));
    const on = await oneEvent(kit.db.prisma, userId, "two_factor_enabled");
    expectFromRequest(on);
    expect(on.method).toBe("totp");
    nextStep();

    // A password alone opens no session yet: no sign_in until the second factor.
    const browser = new Jar();
    expect((await browser.send("post", "/api/auth/sign-in/email", { email, password: PASSWORD })).body.twoFactorRedirect).toBe(true);
    expect(await signIns(userId)).toEqual([["password", null]]);
    const wrongCode = (await totp(secret)) === "000000" ? "111111" : "000000";
    const wrong = await browser.send("post", "/api/auth/two-factor/verify-totp", { code: wrongCode });
    expect([wrong.status, wrong.body.code]).toEqual([401, "invalid_code"]);
    const failed = await oneEvent(kit.db.prisma, userId, "sign_in_failed");
    expectFromRequest(failed, "failure");
    expect(failed).toMatchObject({ method: "password", detail: { reason: "invalid_code", secondFactor: "totp" } });
    await browser.send("post", "/api/auth/two-factor/verify-totp", { code: await totp(secret), trustDevice: true }).then((r) => {
      expect(r.status, r.text).toBe(200);
    });
    // The trusted browser skips the step next time; another one finishes with a backup code.
    await browser.send("post", "/api/auth/sign-out", {});
    expect((await browser.send("post", "/api/auth/sign-in/email", { email, password: PASSWORD })).body.session).toBeDefined();
    const other = new Jar();
    await other.send("post", "/api/auth/sign-in/email", { email, password: PASSWORD });
    expect((await other.send("post", "/api/auth/two-factor/verify-backup-code", { code: backupCodes[0] })).status).toBe(200);
    expect(await signIns(userId)).toEqual([
      ["password", null],
      ["password", { secondFactor: "totp" }],
      ["password", { secondFactor: "trusted-device" }],
      ["password", { secondFactor: "backup-code" }],
    ]);

    await jar.send("post", "/api/auth/two-factor/disable", { password: PASSWORD }).then((r) => expect(r.status).toBe(200));
    expectFromRequest(await oneEvent(kit.db.prisma, userId, "two_factor_disabled"));
    const stored = await storedSince(kit.db.prisma, since);
    for (const secretValue of [secret, wrongCode, ...backupCodes, PASSWORD]) expect(stored).not.toContain(secretValue);
  });
});

describe("passkeys", () => {
  it("records passkey_added and passkey_removed, a passkey sign-in, and a refused passkey as a failed sign-in of its account", async () => {
    const { jar, userId } = await signedUp();
    const authenticator = new SoftwareAuthenticator("ES256", ORIGIN);
    const options = await jar.send("get", "/api/auth/passkey/generate-register-options");
    const added = await jar.send("post", "/api/auth/passkey/verify-registration", {
      response: authenticator.registrationJSON(options.body),
    });
    expect(added.status, added.text).toBe(200);
    const addedEvent = await oneEvent(kit.db.prisma, userId, "passkey_added");
    expectFromRequest(addedEvent);
    expect(addedEvent.detail).toEqual({ passkeyId: added.body.id });

    const signIn = async (overrides = {}) => {
      const browser = new Jar();
      const ask = await browser.send("get", "/api/auth/passkey/generate-authenticate-options");
      return browser.send("post", "/api/auth/passkey/verify-authentication", {
        response: authenticator.authenticationJSON(ask.body, overrides),
      });
    };
    expect((await signIn()).status).toBe(200);
    expect((await signIn({ origin: "https://evil.example" })).body.code).toBe("passkey_verification_failed");
    expect((await eventsOf(kit.db.prisma, userId, ["sign_in"])).map((e) => e.method)).toEqual(["password", "passkey"]);
    const refused = await oneEvent(kit.db.prisma, userId, "sign_in_failed");
    expectFromRequest(refused, "failure");
    expect(refused).toMatchObject({ method: "passkey", detail: { reason: "passkey_verification_failed" } });

    await jar.send("post", "/api/auth/passkey/delete-passkey", { id: added.body.id }).then((r) => expect(r.status).toBe(200));
    expect((await jar.send("post", "/api/auth/passkey/delete-passkey", { id: added.body.id })).status).toBe(404);
    const removed = await oneEvent(kit.db.prisma, userId, "passkey_removed");
    expectFromRequest(removed);
    expect(removed.detail).toEqual({ passkeyId: added.body.id });
  });
});
