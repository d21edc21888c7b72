import { randomBytes } from "node:crypto";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ORIGIN, signUp } from "./kit.js";
import { linkOf, type MailKit, mailKit, pathOf } from "./mail-kit.js";

// Issue 21: a verification link whose callbackURL is absent or the service's own base (where
// GET / answers a 404 envelope) lands on identity's page saying the address is verified, and says
// "already verified" when opened again; API clients keep their JSON answers. Real PostgreSQL,
// real SMTP to a catcher.
const PAGE = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";
const PASSWORD = "correct horse battery";
const HOUR = 60 * 60 * 1000;

let kit: MailKit;
/** Moves the app's clock (expiry checks); 0 is real time. */
let offset = 0;
beforeAll(async () => {
  kit = await mailKit({ now: () => Date.now() + offset });
});
afterAll(async () => {
  await kit?.close();
});

/** The sign-up's verification link, as mailed. */
async function verificationLink(email: string): Promise<string> {
  return linkOf(await kit.mailTo(email, "Verify"));
}

/** Opens `url` (absolute, or relative to `from`) as a browser's navigation would. */
function browse(url: string, from = `${kit.config.baseUrl}/api/auth/verify-email`) {
  return request(kit.app)
    .get(pathOf(new URL(url, from).href))
    .set("accept", PAGE);
}

const continueHref = (html: string) => (/id="continue" href="([^"]+)"/.exec(html)?.[1] ?? "").replaceAll("&amp;", "&");
const title = (html: string) => /<h1>([^<]*)<\/h1>/.exec(html)?.[1];
const isVerified = async (email: string) => (await kit.db.prisma.user.findUniqueOrThrow({ where: { email } })).emailVerified;

describe("a verification link without a callback of its own", () => {
  it("lands a signed-in browser on identity's page saying the address is verified; opened again it says already verified", async () => {
    const { cookie, body } = await signUp(kit.app);
    const link = await verificationLink(body.email);
    // Sign-up without a callbackURL mails the service's base as the link's callback.
    expect(new URL(link).searchParams.get("callbackURL")).toBe(`${new URL(kit.config.baseUrl).origin}/`);

    const hop = await browse(link).set("cookie", cookie).expect(302);
    const landingUrl = hop.headers.location ?? "";
    expect(landingUrl).toMatch(/^\?token=[\w-]{43}&verified=1$/);
    const landing = await browse(landingUrl, link).expect(200);
    expect(landing.type).toBe("text/html");
    expect(title(landing.text)).toBe("Your email address is verified");
    expect(continueHref(landing.text)).toBe(`${ORIGIN}/`);
    expect(await isVerified(body.email)).toBe(true);
    // The landing says so again on a reload.
    expect(title((await browse(landingUrl, link).expect(200)).text)).toBe("Your email address is verified");

    for (const again of [await browse(link).set("cookie", cookie), await browse(link)]) {
      expect(again.status).toBe(200);
      expect(title(again.text)).toBe("Your email address is already verified");
      expect(continueHref(again.text)).toBe(`${ORIGIN}/`);
      expect(again.text).not.toContain(body.email);
    }
    // Without any callbackURL in the link, the same.
    const bare = new URL(link);
    bare.searchParams.delete("callbackURL");
    expect(title((await browse(bare.href).expect(200)).text)).toBe("Your email address is already verified");
  });

  it("the one-click page's click without a session leads to the web app's reset page; the typed password lands on the page", async () => {
    const clicked = (await signUp(kit.app)).body.email;
    const link = await verificationLink(clicked);
    const page = await browse(link).expect(200);
    expect(title(page.text)).toBe("Confirm your email address");
    const action = (/action="([^"]+)"/.exec(page.text)?.[1] ?? "").replaceAll("&amp;", "&");
    expect(action).toMatch(/^\?token=[\w-]{43}$/);
    // The click may lead to the web app's reset page: a form's redirect is held to form-action.
    expect(page.headers["content-security-policy"]).toContain(`form-action 'self' ${ORIGIN};`);
    const click = await request(kit.app)
      .post(pathOf(new URL(action, link).href))
      .set("accept", PAGE)
      .set("origin", new URL(kit.config.baseUrl).origin)
      .expect(303);
    const next = new URL(click.headers.location ?? "");
    expect(`${next.origin}${next.pathname}`).toBe(`${ORIGIN}/reset-password`);
    expect(next.searchParams.get("token")).toMatch(/^[\w-]{43}$/);
    expect(await isVerified(clicked)).toBe(true);
    expect(title((await browse(link).expect(200)).text)).toBe("Your email address is already verified");

    // The page's script posts the typed password as JSON and, with no redirectTo, goes to the landing.
    const typed = (await signUp(kit.app)).body.email;
    const typedLink = await verificationLink(typed);
    const token = new URL(typedLink).searchParams.get("token") ?? "";
    const answer = await request(kit.app).post("/api/auth/verify-email").send({ token, password: PASSWORD }).expect(200);
    expect(answer.body).toMatchObject({ status: true, user: { email: typed, emailVerified: true } });
    expect(answer.body).not.toHaveProperty("redirectTo");
    expect(answer.body).not.toHaveProperty("resetToken");
    expect(title((await browse(`?token=${token}&verified=1`).expect(200)).text)).toBe("Your email address is verified");
    expect(title((await browse(typedLink).expect(200)).text)).toBe("Your email address is already verified");
  });

  it("keeps the JSON answers of API clients (better-auth's verifyEmail), a used link included", async () => {
    const { cookie, body } = await signUp(kit.app);
    const token = new URL(await verificationLink(body.email)).searchParams.get("token") ?? "";
    const used = await request(kit.app)
      .get(`/api/auth/verify-email?token=${token}`)
      .set("cookie", cookie)
      .set("accept", "application/json")
      .expect(200);
    expect(used.body).toMatchObject({ status: true, user: { email: body.email, emailVerified: true } });
    const again = await request(kit.app).get(`/api/auth/verify-email?token=${token}`).set("accept", "application/json").expect(400);
    expect(again.body).toMatchObject({ code: "invalid_token" });
    const posted = await request(kit.app).post("/api/auth/verify-email").send({ token, password: PASSWORD }).expect(400);
    expect(posted.body).toMatchObject({ code: "invalid_token" });
  });

  it("a token works once when two clicks race", async () => {
    const email = (await signUp(kit.app)).body.email;
    const token = new URL(await verificationLink(email)).searchParams.get("token") ?? "";
    const answers = await Promise.all(
      [0, 1].map(() => request(kit.app).post("/api/auth/verify-email").send({ token, password: PASSWORD })),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([200, 400]);
  });
});

describe("what a link that is not a used verification of a verified address says", () => {
  it("an unknown token: invalid or expired, as a page in a browser and as invalid_token to an API client", async () => {
    const unknown = `/api/auth/verify-email?token=${randomBytes(32).toString("base64url")}`;
    const page = await browse(unknown).expect(400);
    expect(page.type).toBe("text/html");
    expect(title(page.text)).toBe("This link is invalid or has expired");
    expect(continueHref(page.text)).toBe(`${ORIGIN}/`);
    const json = await request(kit.app).get(unknown).expect(400);
    expect(json.body).toMatchObject({ code: "invalid_token" });
  });

  it("a used link whose address the account no longer has, and a used link past its expiry, say invalid", async () => {
    const moved = await signUp(kit.app);
    const movedLink = await verificationLink(moved.body.email);
    await browse(movedLink).set("cookie", moved.cookie).expect(302);
    await kit.db.prisma.user.update({ where: { email: moved.body.email }, data: { email: `moved-${moved.body.email}` } });
    expect(title((await browse(movedLink).expect(400)).text)).toBe("This link is invalid or has expired");

    const aged = await signUp(kit.app);
    const agedLink = await verificationLink(aged.body.email);
    await browse(agedLink).set("cookie", aged.cookie).expect(302);
    expect(title((await browse(agedLink).expect(200)).text)).toBe("Your email address is already verified");
    offset = 25 * HOUR;
    try {
      expect(title((await browse(agedLink).expect(400)).text)).toBe("This link is invalid or has expired");
      expect(await kit.service.mailTokens.purgeExpired()).toBeGreaterThan(0);
    } finally {
      offset = 0;
    }
  });

  it("a used link with the web app's callback: a browser reads already verified and continues there; other clients get the error", async () => {
    const callbackURL = `${ORIGIN}/?verified=1`;
    const res = await request(kit.app)
      .post("/api/auth/sign-up/email")
      .send({ email: `web-${Date.now()}@example.com`, password: PASSWORD, name: "Web", callbackURL })
      .expect(200);
    const email = res.body.user.email as string;
    const cookie = (res.headers["set-cookie"] as unknown as string[])[0]?.split(";")[0] ?? "";
    const link = await verificationLink(email);
    expect((await browse(link).set("cookie", cookie).expect(302)).headers.location).toBe(callbackURL);
    const again = await browse(link).expect(200);
    expect(title(again.text)).toBe("Your email address is already verified");
    expect(continueHref(again.text)).toBe(callbackURL);
    expect((await request(kit.app).get(pathOf(link)).expect(302)).headers.location).toBe(`${ORIGIN}/?verified=1&error=INVALID_TOKEN`);
  });
});
