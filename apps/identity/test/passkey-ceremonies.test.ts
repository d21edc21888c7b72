import type { Express } from "express";
import { parseSetCookie } from "set-cookie-parser";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHALLENGE_TTL_MS } from "../src/passkeys/challenges.js";
import { ORIGIN } from "./kit.js";
import { type MailKit, mailKit } from "./mail-kit.js";
import { FLAGS, type KeyAlgorithm, type Overrides, type SoftCredential, SoftwareAuthenticator } from "./webauthn-authenticator.js";

// Registration and sign-in with a software authenticator (real P-256 and Ed25519 keys, real
// attestation objects and assertions) against the real app on PostgreSQL, its mail over SMTP
// to a catcher. The app's clock is real time plus an offset a test moves (challenge expiry).

const CHALLENGE_COOKIE = "identity.better-auth-passkey";
const SESSION_COOKIE = "identity.session_token";
let kit: MailKit;
let offset = 0;

beforeAll(async () => {
  kit = await mailKit({ now: () => Date.now() + offset });
});
afterAll(async () => {
  await kit?.close();
});

/** One browser on the web app's origin: JSON requests and a cookie jar. */
class Browser {
  readonly jar = new Map<string, string>();
  constructor(readonly app: Express) {}

  async send(method: "get" | "post", path: string, body?: unknown, cookies?: Map<string, string>) {
    const jar = cookies ?? this.jar;
    let req = request(this.app)[method](path).set("origin", ORIGIN).set("accept", "application/json");
    if (jar.size) req = req.set("cookie", [...jar].map(([k, v]) => `${k}=${v}`).join("; "));
    const res = body === undefined ? await req : await req.send(body as object);
    const lines = (res.headers["set-cookie"] ?? []) as unknown as string[];
    for (const cookie of parseSetCookie(lines)) {
      if (!cookie.value || (cookie.expires && cookie.expires.getTime() <= Date.now())) this.jar.delete(cookie.name);
      else this.jar.set(cookie.name, cookie.value);
    }
    return res;
  }
}

/** Why @simplewebauthn/server refused the last ceremony, as the app logs it. */
function lastRefusal(): string {
  const line = kit.logs.findLast((l) => l.includes("passkey") && l.includes("refused"));
  return line ? String(JSON.parse(line).reason) : "";
}

let n = 0;
async function signedUp(): Promise<{ browser: Browser; user: { id: string; email: string } }> {
  const browser = new Browser(kit.app);
  const email = `passkey-${++n}-${Date.now()}@example.com`;
  const res = await browser.send("post", "/api/auth/sign-up/email", { email, password: "correct horse battery", name: `P ${n}` });
  expect(res.status, res.text).toBe(200);
  return { browser, user: res.body.user };
}

async function register(browser: Browser, authenticator: SoftwareAuthenticator, overrides: Overrides = {}, name?: string) {
  const options = await browser.send("get", "/api/auth/passkey/generate-register-options");
  expect(options.status, options.text).toBe(200);
  const response = authenticator.registrationJSON(options.body, overrides);
  return browser.send("post", "/api/auth/passkey/verify-registration", { response, ...(name ? { name } : {}) });
}

async function signIn(browser: Browser, authenticator: SoftwareAuthenticator, overrides: Overrides = {}) {
  const options = await browser.send("get", "/api/auth/passkey/generate-authenticate-options");
  expect(options.status, options.text).toBe(200);
  return browser.send("post", "/api/auth/passkey/verify-authentication", {
    response: authenticator.authenticationJSON(options.body, overrides),
  });
}

describe.each<KeyAlgorithm>(["ES256", "Ed25519"])("a %s passkey", (alg) => {
  it("registers (mailing the user), then signs a new browser in: session cookie, then get-session's JWT", async () => {
    const { browser, user } = await signedUp();
    const authenticator = new SoftwareAuthenticator(alg, ORIGIN);
    const options = await browser.send("get", "/api/auth/passkey/generate-register-options");
    expect(options.body).toMatchObject({
      rp: { id: "localhost", name: "localhost:3000" },
      user: { name: user.email },
      attestation: "none",
      authenticatorSelection: { userVerification: "required" },
    });
    expect(browser.jar.get(CHALLENGE_COOKIE)).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const stored = await kit.db.prisma.authChallenge.findFirstOrThrow({ where: { userId: user.id, purpose: "passkey-registration" } });
    expect(Buffer.from(stored.secretHash).toString("base64url")).not.toBe(browser.jar.get(CHALLENGE_COOKIE));
    const response = authenticator.registrationJSON(options.body);
    const added = await browser.send("post", "/api/auth/passkey/verify-registration", { response, name: "Laptop" });
    expect(added.status, added.text).toBe(200);
    expect(added.body).toMatchObject({ name: "Laptop", userId: user.id, credentialID: response.id, counter: 0, transports: "internal" });
    expect(added.body.aaguid).toBe("00000000-0000-0000-0000-000000000000");
    expect(browser.jar.has(CHALLENGE_COOKIE)).toBe(false);
    expect(await kit.db.prisma.authChallenge.count({ where: { userId: user.id } })).toBe(0);

    const mail = await kit.mailTo(user.email, "A passkey was added");
    expect(mail.links).toEqual(["http://localhost:3000/account/security"]);

    const other = new Browser(kit.app);
    const signedIn = await signIn(other, authenticator);
    expect(signedIn.status, signedIn.text).toBe(200);
    expect(signedIn.body.user).toMatchObject({ id: user.id, email: user.email });
    expect(other.jar.get(SESSION_COOKIE)).toBeTruthy();
    const session = await other.send("get", "/api/auth/get-session");
    expect(session.body.user.id).toBe(user.id);
    expect(session.headers["set-auth-jwt"]).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    const row = await kit.db.prisma.passkey.findFirstOrThrow({ where: { userId: user.id } });
    expect(row.counter).toBe(1n);
  });
});

describe("passkey ceremonies refuse", () => {
  let owner: Awaited<ReturnType<typeof signedUp>>;
  let authenticator: SoftwareAuthenticator;
  let credential: SoftCredential;

  beforeAll(async () => {
    owner = await signedUp();
    authenticator = new SoftwareAuthenticator("ES256", ORIGIN);
    expect((await register(owner.browser, authenticator)).status).toBe(200);
    credential = authenticator.credentials[0] as SoftCredential;
  });

  it("a registration or sign-in from another origin or for another RP id", async () => {
    const { browser } = await signedUp();
    const other = new SoftwareAuthenticator("ES256", ORIGIN);
    const wrongOrigin = await register(browser, other, { origin: "https://evil.example" });
    expect([wrongOrigin.status, wrongOrigin.body.code]).toEqual([400, "passkey_verification_failed"]);
    expect(lastRefusal()).toContain('origin "https://evil.example"');
    const wrongRp = await register(browser, other, { rpId: "evil.example" });
    expect([wrongRp.status, wrongRp.body.code]).toEqual([400, "passkey_verification_failed"]);
    expect(lastRefusal()).toContain("RP ID hash");
    expect(
      await kit.db.prisma.passkey.count({ where: { userId: (await browser.send("get", "/api/auth/get-session")).body.user.id } }),
    ).toBe(0);

    for (const [overrides, reason] of [
      [{ origin: "https://evil.example" }, "origin"],
      [{ rpId: "evil.example" }, "RP ID hash"],
    ] as const) {
      const res = await signIn(new Browser(kit.app), authenticator, overrides);
      expect([res.status, res.body.code]).toEqual([400, "passkey_verification_failed"]);
      expect(lastRefusal()).toContain(reason);
    }
  });

  it("a challenge used once already, or answered without its cookie", async () => {
    const browser = new Browser(kit.app);
    const options = await browser.send("get", "/api/auth/passkey/generate-authenticate-options");
    const cookies = new Map(browser.jar);
    const first = await browser.send("post", "/api/auth/passkey/verify-authentication", {
      response: authenticator.authenticationJSON(options.body),
    });
    expect(first.status).toBe(200);
    const again = await browser.send(
      "post",
      "/api/auth/passkey/verify-authentication",
      { response: authenticator.authenticationJSON(options.body) },
      cookies,
    );
    expect([again.status, again.body.code]).toEqual([400, "challenge_expired"]);
    const bare = await new Browser(kit.app).send("post", "/api/auth/passkey/verify-authentication", {
      response: authenticator.authenticationJSON(options.body),
    });
    expect([bare.status, bare.body.code]).toEqual([400, "challenge_expired"]);
  });

  it("a challenge older than five minutes", async () => {
    const browser = new Browser(kit.app);
    const options = await browser.send("get", "/api/auth/passkey/generate-authenticate-options");
    offset += CHALLENGE_TTL_MS + 1_000;
    try {
      const res = await browser.send("post", "/api/auth/passkey/verify-authentication", {
        response: authenticator.authenticationJSON(options.body),
      });
      expect([res.status, res.body.code]).toEqual([400, "challenge_expired"]);
    } finally {
      offset = 0;
    }
  });

  it("a signature counter that did not move past the stored one, which stays", async () => {
    const before = await kit.db.prisma.passkey.findFirstOrThrow({ where: { credentialId: credential.idB64 } });
    const replay = await signIn(new Browser(kit.app), authenticator, { counter: Number(before.counter) });
    expect([replay.status, replay.body.code]).toEqual([400, "passkey_verification_failed"]);
    expect(lastRefusal()).toContain("counter");
    const back = await signIn(new Browser(kit.app), authenticator, { counter: 1 });
    expect(back.status).toBe(400);
    const after = await kit.db.prisma.passkey.findFirstOrThrow({ where: { credentialId: credential.idB64 } });
    expect(after.counter).toBe(before.counter);
    credential.counter = Number(before.counter);
    expect((await signIn(new Browser(kit.app), authenticator)).status).toBe(200);
  });

  it("all but one of two sign-ins reporting the same counter, sent at once", async () => {
    const [a, b] = [new Browser(kit.app), new Browser(kit.app)];
    const [optionsA, optionsB] = await Promise.all([a, b].map((x) => x.send("get", "/api/auth/passkey/generate-authenticate-options")));
    const next = credential.counter + 1;
    const bodies = [optionsA, optionsB].map((o) => ({ response: authenticator.authenticationJSON(o?.body, { counter: next }) }));
    const answers = await Promise.all([
      a.send("post", "/api/auth/passkey/verify-authentication", bodies[0]),
      b.send("post", "/api/auth/passkey/verify-authentication", bodies[1]),
    ]);
    expect(answers.map((r) => r.status).sort()).toEqual([200, 400]);
    const row = await kit.db.prisma.passkey.findFirstOrThrow({ where: { credentialId: credential.idB64 } });
    expect(row.counter).toBe(BigInt(next));
  });

  it("a registration or assertion without user verification (UV flag)", async () => {
    const { browser } = await signedUp();
    const res = await register(browser, new SoftwareAuthenticator("Ed25519", ORIGIN), { flags: FLAGS.UP | FLAGS.AT });
    expect([res.status, res.body.code]).toEqual([400, "passkey_verification_failed"]);
    expect(lastRefusal()).toContain("User verification");
    const signInRes = await signIn(new Browser(kit.app), authenticator, { flags: FLAGS.UP });
    expect([signInRes.status, signInRes.body.code]).toEqual([400, "passkey_verification_failed"]);
    expect(lastRefusal()).toContain("User verification");
  });

  it("a credential already registered, to this user or another", async () => {
    const again = await register(owner.browser, authenticator, { reuse: credential });
    expect([again.status, again.body.code]).toEqual([409, "conflict"]);
    const { browser } = await signedUp();
    const stolen = await register(browser, authenticator, { reuse: credential });
    expect([stolen.status, stolen.body.code]).toEqual([409, "conflict"]);
    expect(await kit.db.prisma.passkey.count({ where: { credentialId: credential.idB64 } })).toBe(1);
  });

  it("a registration challenge made for another session's user", async () => {
    const { browser } = await signedUp();
    const options = await owner.browser.send("get", "/api/auth/passkey/generate-register-options");
    const cookies = new Map(browser.jar).set(CHALLENGE_COOKIE, owner.browser.jar.get(CHALLENGE_COOKIE) ?? "");
    const response = new SoftwareAuthenticator("ES256", ORIGIN).registrationJSON(options.body);
    const res = await browser.send("post", "/api/auth/passkey/verify-registration", { response }, cookies);
    expect([res.status, res.body.code]).toEqual([400, "challenge_expired"]);
  });

  it("nothing to a user with two-factor on: a passkey is both factors", async () => {
    await kit.db.prisma.user.update({ where: { id: owner.user.id }, data: { twoFactorEnabled: true } });
    const browser = new Browser(kit.app);
    const res = await signIn(browser, authenticator);
    expect(res.status, res.text).toBe(200);
    expect(res.body.session.userId).toBe(owner.user.id);
    expect(browser.jar.get(SESSION_COOKIE)).toBeTruthy();
    expect((await browser.send("get", "/api/auth/get-session")).body.user.id).toBe(owner.user.id);
  });

  it("malformed bodies with a 400, never a 500", async () => {
    const browser = new Browser(kit.app);
    await browser.send("get", "/api/auth/passkey/generate-authenticate-options");
    const garbage = {
      id: "AAAA",
      rawId: "AAAA",
      type: "public-key",
      response: { clientDataJSON: "AAAA", authenticatorData: "AAAA", signature: "AAAA" },
    };
    for (const body of [{}, { response: "x" }, { response: { ...garbage, type: "other" } }]) {
      const res = await browser.send("post", "/api/auth/passkey/verify-authentication", body);
      expect([res.status, res.body.code]).toEqual([400, "validation_failed"]);
    }
    const unknown = await browser.send("post", "/api/auth/passkey/verify-authentication", { response: garbage });
    expect([unknown.status, unknown.body.code]).toEqual([400, "passkey_verification_failed"]);
    const { browser: signed } = await signedUp();
    await signed.send("get", "/api/auth/passkey/generate-register-options");
    const bad = await signed.send("post", "/api/auth/passkey/verify-registration", {
      response: { id: "AAAA", rawId: "AAAA", type: "public-key", response: { clientDataJSON: "AAAA", attestationObject: "AAAA" } },
    });
    expect([bad.status, bad.body.code]).toEqual([400, "passkey_verification_failed"]);
  });
});
