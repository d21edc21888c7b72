import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { identityKit, type Kit, signUp } from "./kit.js";

// Addresses that look like an existing one must name that account or be refused
// (emailSchema in packages/contracts/src/auth.ts): NFKC folds full-width letters, the domain is
// IDNA ASCII, and invisible characters or mixed-script local parts get a 400 naming the field.
const SIGN_UP = "/api/auth/sign-up/email";
const SIGN_IN = "/api/auth/sign-in/email";
const PASSWORD = "correct horse battery";
let kit: Kit;

beforeAll(async () => {
  kit = await identityKit();
});
afterAll(async () => {
  await kit?.close();
});

async function refused(email: string, message: RegExp) {
  const res = await request(kit.app).post(SIGN_UP).send({ email, password: PASSWORD, name: "Look Alike" });
  expect(res.status).toBe(400);
  expect(res.body.error.code).toBe("validation_failed");
  expect(res.body.error.issues).toEqual([{ path: "email", message: expect.stringMatching(message) }]);
  return res;
}

describe("look-alike emails", () => {
  it("folds full-width letters (NFKC): the same account, so sign-up answers 409 and sign-in works", async () => {
    await signUp(kit.app, { email: "ann@example.com", password: PASSWORD });
    const wide = "\uff41\uff4e\uff4e@\uff45\uff58\uff41\uff4d\uff50\uff4c\uff45.com"; // ａｎｎ@ｅｘａｍｐｌｅ.com
    const dup = await request(kit.app).post(SIGN_UP).send({ email: wide, password: PASSWORD, name: "Wide" });
    expect(dup.status).toBe(409);
    expect(dup.body.error.code).toBe("email_taken");
    const signedIn = await request(kit.app).post(SIGN_IN).send({ email: wide, password: PASSWORD }).expect(200);
    expect(signedIn.body.user.email).toBe("ann@example.com");
  });

  it.each([
    ["zero-width space", "a\u200bnn@example.com"],
    ["zero-width joiner", "ann\u200d@example.com"],
    ["zero-width non-joiner", "a\u200cnn@example.com"],
    ["word joiner", "an\u2060n@example.com"],
    ["byte order mark", "an\ufeffn@example.com"],
    ["soft hyphen", "an\u00adn@example.com"],
    ["right-to-left override", "\u202eann@example.com"],
    ["left-to-right isolate", "\u2066ann@example.com"],
    ["Mongolian vowel separator", "an\u180en@example.com"],
  ])("refuses invisible characters (%s) with a 400 on the email field", async (_label, email) => {
    await refused(email, /invisible characters/);
    expect((await request(kit.app).post(SIGN_IN).send({ email, password: PASSWORD })).status).toBe(400);
  });

  it.each([
    ["Cyrillic a among Latin letters", "\u0430nn@example.com"],
    ["Greek omicron among Latin letters", "j\u03bfhn@example.com"],
    ["Latin among Cyrillic letters", "\u0438\u0432a\u043d@example.com"],
  ])("refuses a mixed-script local part (%s)", async (_label, email) => {
    await refused(email, /mixes letters of different scripts/);
  });

  it("accepts single-script local parts with digits and punctuation, and stores IDNA domains in ASCII", async () => {
    const cyrillic = await signUp(kit.app, { email: "\u0430\u043d\u043d\u0430.1990+2@example.com" });
    expect(cyrillic.user.email).toBe("\u0430\u043d\u043d\u0430.1990+2@example.com");
    const idn = await signUp(kit.app, { email: "Jos\u00e9_2@B\u00fccher.de", password: PASSWORD });
    expect(idn.user.email).toBe("jos\u00e9_2@xn--bcher-kva.de");
    await request(kit.app).post(SIGN_IN).send({ email: "jose\u0301_2@xn--bcher-kva.de", password: PASSWORD }).expect(200);
  });

  it("refuses a domain that is not a host name", async () => {
    await refused("ann@exa mple.com", /domain is not valid/);
    await refused("ann@[127.0.0.1]", /domain is not valid/);
    await refused("ann@example..com", /domain is not valid/);
    await refused("ann@example.com..", /domain is not valid/);
  });

  it("reads a trailing dot (the fully qualified domain) as the same address", async () => {
    const { user } = await signUp(kit.app, { email: "target@example.com", password: PASSWORD });
    for (const email of ["target@example.com.", "TARGET@Example.COM.", "target@example\u3002com\u3002"]) {
      const dup = await request(kit.app).post(SIGN_UP).send({ email, password: PASSWORD, name: "Dot" });
      expect(dup.status).toBe(409);
      const signedIn = await request(kit.app).post(SIGN_IN).send({ email, password: PASSWORD }).expect(200);
      expect(signedIn.body.user.id).toBe(user.id);
    }
    expect(await kit.db.prisma.user.count({ where: { email: { startsWith: "target@" } } })).toBe(1);
  });
});

describe("names", () => {
  it.each([
    ["right-to-left override", "Bob\u202enimda"],
    ["left-to-right embedding", "\u202aBob"],
    ["right-to-left isolate", "Bob\u2067x"],
    ["right-to-left mark", "Bob\u200f"],
    ["Arabic letter mark", "Bob\u061c"],
    ["a tab", "Bob\tSmith"],
  ])("refuses bidi and other control characters (%s) with a 400 on the name field", async (_label, name) => {
    const res = await request(kit.app)
      .post(SIGN_UP)
      .send({ email: `bidi-${Date.now()}@example.com`, password: PASSWORD, name });
    expect(res.status).toBe(400);
    expect(res.body.error.issues).toEqual([{ path: "name", message: "name contains control characters" }]);
    const { cookie } = await signUp(kit.app);
    const update = await request(kit.app).post("/api/auth/update-user").set("cookie", cookie).send({ name });
    expect(update.status).toBe(400);
  });

  it("keeps names with joiners (emoji sequences) and trims surrounding white space", async () => {
    const { cookie } = await signUp(kit.app);
    const family = "\u{1F468}\u200d\u{1F469}\u200d\u{1F467} Family";
    const res = await request(kit.app)
      .post("/api/auth/update-user")
      .set("cookie", cookie)
      .send({ name: `${family}\n` })
      .expect(200);
    expect(res.body.user.name).toBe(family);
  });
});
