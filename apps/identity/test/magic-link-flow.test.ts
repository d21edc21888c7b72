import { randomUUID } from "node:crypto";
import request from "supertest";
import { describe, expect, it } from "vitest";
import { identityKit, ORIGIN, sessionCookie } from "./kit.js";
import { pathOf } from "./mail-kit.js";
import { fresh, MAIL_LIMITS, mailboxProof, mailKitPerFile } from "./mailbox-proof-kit.js";

// Sign-in by magic link (better-auth's magicLink wire), through real PostgreSQL and real SMTP to a
// catcher: every address gets a link, a link works once for 5 minutes, a scanner's GET spends
// nothing, a new address gets its account, callbacks stay on trusted origins.
const PAGE = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";
const MINUTE = 60 * 1000;

/** Moves the app's clock (expiry checks); 0 is real time. */
let offset = 0;
const kit = mailKitPerFile({ now: () => Date.now() + offset });
const { linkFor } = mailboxProof(kit);

/** Opens the link as an API client (better-auth's magicLink.verify asks for JSON). */
const useAsClient = (link: string) => request(kit.app).get(pathOf(link)).set("accept", "application/json");

async function verifiedUser(label: string) {
  return kit.db.prisma.user.create({ data: { id: randomUUID(), email: fresh(label), name: label, emailVerified: true } });
}

describe("asking for a magic link", () => {
  it("answers 200 {status: true} for an unknown, an unverified and a verified address, with the same statements", async () => {
    // No worker here: only the requests' own statements are counted.
    const quiet = await identityKit({ database: kit.database, mailer: kit.mailer, env: MAIL_LIMITS });
    try {
      const statements = async (email: string) => {
        const before = quiet.db.queryCount();
        await request(quiet.app).post("/api/auth/sign-in/magic-link").send({ email }).expect(200, { status: true });
        return quiet.db.queryCount() - before;
      };
      const unverified = await kit.db.prisma.user.create({ data: { id: randomUUID(), email: fresh("count-unverified"), name: "U" } });
      const counts = [
        await statements(fresh("count-unknown")),
        await statements(unverified.email),
        await statements((await verifiedUser("count-verified")).email),
      ];
      expect(new Set(counts).size, JSON.stringify(counts)).toBe(1);
    } finally {
      await quiet.close();
    }
  });

  it("mails every address a link to /api/auth/magic-link/verify; the table keeps only an HMAC of its token and no address", async () => {
    const email = fresh("stored");
    const link = new URL(await linkFor(email));
    expect(`${link.origin}${link.pathname}`).toBe(`${kit.config.baseUrl}/api/auth/magic-link/verify`);
    const token = link.searchParams.get("token") ?? "";
    expect(token).toMatch(/^[\w-]{43}$/);
    const rows = await kit.db.prisma.$queryRaw<{ row: string }[]>`SELECT row_to_json(c)::text AS row FROM auth_challenge c`;
    const text = rows.map((r) => r.row).join("\n");
    expect(text).not.toContain(token);
    expect(text).not.toContain(email);
    expect(kit.logs.join("")).not.toContain(token);
  });

  it("refuses a callback off this site and its trusted origins with 403, before anything is written", async () => {
    const before = await kit.db.prisma.mailOutbox.count();
    for (const field of ["callbackURL", "newUserCallbackURL", "errorCallbackURL"]) {
      const res = await request(kit.app)
        .post("/api/auth/sign-in/magic-link")
        .send({ email: fresh("evil"), [field]: "https://evil.example/steal" });
      expect([res.status, res.body.code]).toEqual([403, "forbidden"]);
    }
    expect(await kit.db.prisma.mailOutbox.count()).toBe(before);
  });

  it("puts the checked callbacks, absolute, in the link; a callback on the service's own base names no page and is left out", async () => {
    const link = new URL(await linkFor(fresh("callbacks"), { callbackURL: `${ORIGIN}/home`, errorCallbackURL: "/oops" }));
    expect(link.searchParams.get("callbackURL")).toBe(`${ORIGIN}/home`);
    expect(link.searchParams.get("errorCallbackURL")).toBe(`${kit.config.baseUrl}/oops`);
    const bare = new URL(await linkFor(fresh("bare"), { callbackURL: "/" }));
    expect([...bare.searchParams.keys()]).toEqual(["token"]);
  });

  it("answers 503 mail_unavailable for every address without SMTP_URL", async () => {
    const noMail = await identityKit({ database: kit.database, env: MAIL_LIMITS });
    try {
      for (const email of [fresh("nomail"), (await verifiedUser("nomail-known")).email]) {
        const res = await request(noMail.app).post("/api/auth/sign-in/magic-link").send({ email });
        expect([res.status, res.body.code]).toEqual([503, "mail_unavailable"]);
      }
    } finally {
      await noMail.close();
    }
  });
});

describe("using a magic link", () => {
  it("signs a new address in once: the account is created, verified, with the name asked for", async () => {
    const email = fresh("newcomer");
    const link = await linkFor(email, { name: "New Comer" });
    expect(await kit.db.prisma.user.findUnique({ where: { email } })).toBeNull();
    const res = await useAsClient(link).expect(200);
    expect(res.body.user).toMatchObject({ email, name: "New Comer", emailVerified: true });
    const cookie = sessionCookie(res) ?? "";
    const session = await request(kit.app).get("/api/auth/get-session").set("cookie", cookie).expect(200);
    expect(session.body.user.email).toBe(email);
    expect(session.headers["set-auth-jwt"]).toBeTruthy();

    const again = await useAsClient(link);
    expect([again.status, again.body.code]).toEqual([400, "invalid_token"]);
    expect(await kit.db.prisma.user.count({ where: { email } })).toBe(1);
  });

  it("signs an existing account in; another link of the address stays valid", async () => {
    const user = await verifiedUser("existing");
    const first = await linkFor(user.email);
    const second = await linkFor(user.email);
    expect((await useAsClient(second).expect(200)).body.user.id).toBe(user.id);
    expect((await useAsClient(first).expect(200)).body.user.id).toBe(user.id);
    expect(await kit.db.prisma.session.count({ where: { userId: user.id } })).toBe(2);
  });

  it("works for 5 minutes", async () => {
    const user = await verifiedUser("clock");
    const late = await linkFor(user.email);
    const inTime = await linkFor(user.email);
    try {
      offset = 5 * MINUTE - 1_000;
      await useAsClient(inTime).expect(200);
      offset = 5 * MINUTE + 1;
      const res = await useAsClient(late);
      expect([res.status, res.body.code]).toEqual([400, "invalid_token"]);
      // A browser gets identity's page saying so.
      const page = await request(kit.app).get(pathOf(late)).set("accept", PAGE).expect(400);
      expect(page.text).toContain("This link is invalid or has expired");
    } finally {
      offset = 0;
    }
  });

  it("is not spent by a mail scanner's GET or HEAD: a browser gets the one-click page, whose POST signs in and redirects", async () => {
    const user = await verifiedUser("scanned");
    const link = await linkFor(user.email, { callbackURL: `${ORIGIN}/dashboard` });
    for (let i = 0; i < 2; i++) {
      const page = await request(kit.app).get(pathOf(link)).set("accept", PAGE).expect(200);
      expect(page.type).toBe("text/html");
      expect(sessionCookie(page)).toBeUndefined();
      expect(page.text).toContain(`sign in as ${user.email}`);
      expect(page.headers["content-security-policy"]).toContain(`form-action 'self' ${ORIGIN}`);
      await request(kit.app).head(pathOf(link)).expect(200);
    }
    expect(await kit.db.prisma.session.count({ where: { userId: user.id } })).toBe(0);

    const page = await request(kit.app).get(pathOf(link)).set("accept", PAGE);
    const action = (/<form id="confirm" method="post" action="([^"]+)"/.exec(page.text)?.[1] ?? "").replaceAll("&amp;", "&");
    const target = new URL(action, link);
    expect(target.pathname).toBe("/api/auth/magic-link/verify");
    const click = await request(kit.app)
      .post(`${target.pathname}${target.search}`)
      .set("origin", new URL(kit.config.baseUrl).origin)
      .set("content-type", "application/x-www-form-urlencoded")
      .expect(303);
    expect(click.headers.location).toBe(`${ORIGIN}/dashboard`);
    expect(sessionCookie(click)).toBeTruthy();
    // Used: the same click again goes to the callback with the error.
    const reused = await request(kit.app).post(`${target.pathname}${target.search}`).expect(303);
    expect(reused.headers.location).toBe(`${ORIGIN}/dashboard?error=INVALID_TOKEN`);
  });

  it("sends a new account to newUserCallbackURL, an existing one to callbackURL, a bad link to errorCallbackURL", async () => {
    const callbacks = { callbackURL: `${ORIGIN}/home`, newUserCallbackURL: `${ORIGIN}/welcome`, errorCallbackURL: `${ORIGIN}/sign-in` };
    const created = await useAsClient(await linkFor(fresh("new-callback"), callbacks)).expect(302);
    expect(created.headers.location).toBe(`${ORIGIN}/welcome`);
    const link = await linkFor((await verifiedUser("old-callback")).email, callbacks);
    expect((await useAsClient(link).expect(302)).headers.location).toBe(`${ORIGIN}/home`);
    expect((await useAsClient(link).expect(302)).headers.location).toBe(`${ORIGIN}/sign-in?error=INVALID_TOKEN`);
    // A callback in the link's query is checked again: a forged one answers 403.
    const forged = new URL(link);
    forged.searchParams.set("callbackURL", "https://evil.example/");
    const res = await useAsClient(forged.href);
    expect([res.status, res.body.code]).toEqual([403, "forbidden"]);
  });

  it("without a callback, a browser's click lands on the web app", async () => {
    const link = await linkFor((await verifiedUser("home")).email);
    const click = await request(kit.app).post(pathOf(link)).set("origin", ORIGIN).expect(303);
    expect(click.headers.location).toBe(`${ORIGIN}/`);
  });
});

describe("magic link limits", () => {
  it("limits asking per address and per IP (mail limits), and clicking per IP (sign-in limit)", async () => {
    const strict = await identityKit({
      database: kit.database,
      mailer: kit.mailer,
      env: { RATE_LIMIT_MAIL_ADDRESS_MAX: "2", RATE_LIMIT_MAIL_IP_MAX: "4", RATE_LIMIT_IP_MAX: "2", MAIL_BUDGET_PER_HOUR: "100" },
    });
    try {
      const ask = (email: string) => request(strict.app).post("/api/auth/sign-in/magic-link").send({ email });
      const email = fresh("limited");
      expect((await ask(email)).status).toBe(200);
      expect((await ask(email)).status).toBe(200);
      const third = await ask(email);
      expect([third.status, third.body.code]).toEqual([429, "rate_limited"]);
      expect(third.headers["retry-after"]).toBeTruthy();
      // The refused request counted for the IP too: its fourth passes, its fifth does not.
      expect((await ask(fresh("other"))).status).toBe(200);
      expect((await ask(fresh("another"))).status).toBe(429);

      const click = () =>
        request(strict.app)
          .post("/api/auth/magic-link/verify")
          .send({ token: "x".repeat(43) });
      expect((await click()).status).toBe(400);
      expect((await click()).status).toBe(400);
      expect((await click()).status).toBe(429);
    } finally {
      await strict.close();
    }
  });
});
