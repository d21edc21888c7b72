import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ORIGIN, sessionCookie, signUp } from "./kit.js";
import { linkOf, type MailKit, mailKit, pathOf } from "./mail-kit.js";

// A sign-in by mail proves one factor: an account with two-factor on gets the second-factor step
// (sign-in/finish.ts), never a session, whether the link is used by an API client, clicked on the
// one-click page, or a sign-in code is typed. Real PostgreSQL, real SMTP to a catcher.
const LIMITS = { RATE_LIMIT_MAIL_IP_MAX: "100000", RATE_LIMIT_MAIL_ADDRESS_MAX: "100000", MAIL_BUDGET_PER_HOUR: "100000" };
const PASSWORD = "correct horse battery";
const PENDING = "identity.two_factor";

let kit: MailKit;
beforeAll(async () => {
  kit = await mailKit({ env: LIMITS });
});
afterAll(async () => {
  await kit?.close();
});

const lastId = () => kit.catcher.messages().at(-1)?.id ?? 0;
const mailAfter = (to: string, subject: string, after: number) =>
  kit.catcher.waitFor((m) => m.id > after && m.to.includes(to) && m.subject === subject);

/** A verified account with emailed second-factor codes on. */
async function twoFactorUser(): Promise<string> {
  const { cookie, body } = await signUp(kit.app);
  await kit.db.prisma.user.update({ where: { email: body.email }, data: { emailVerified: true } });
  await request(kit.app).post("/api/auth/two-factor/enable").set("cookie", cookie).send({ password: PASSWORD, method: "otp" }).expect(200);
  return body.email;
}

async function linkFor(email: string, extra: object = {}): Promise<string> {
  const after = lastId();
  await request(kit.app)
    .post("/api/auth/sign-in/magic-link")
    .send({ email, ...extra })
    .expect(200);
  return linkOf(await mailAfter(email, "Your sign-in link", after));
}

const pendingCookie = (res: request.Response) => sessionCookie(res, PENDING);

describe("sign-in by mail on an account with two-factor on", () => {
  it("a link used by an API client answers better-auth's twoFactorRedirect, with no session", async () => {
    const email = await twoFactorUser();
    const res = await request(kit.app)
      .get(pathOf(await linkFor(email)))
      .set("accept", "application/json")
      .expect(200);
    expect(res.body).toEqual({ twoFactorRedirect: true, twoFactorMethods: ["otp"] });
    expect(sessionCookie(res)).toBeUndefined();
    expect(pendingCookie(res)).toBeTruthy();
  });

  it("a click on the one-click page goes to the web app's second-factor page, the callback kept", async () => {
    const email = await twoFactorUser();
    const link = await linkFor(email, { callbackURL: `${ORIGIN}/home` });
    const click = await request(kit.app).post(pathOf(link)).set("origin", ORIGIN).expect(303);
    const next = new URL(click.headers.location ?? "");
    expect(`${next.origin}${next.pathname}`).toBe(`${ORIGIN}/sign-in/two-factor`);
    expect(next.searchParams.get("callbackURL")).toBe(`${ORIGIN}/home`);
    expect(sessionCookie(click)).toBeUndefined();
    expect(pendingCookie(click)).toBeTruthy();
  });

  it("a sign-in code answers twoFactorRedirect too", async () => {
    const email = await twoFactorUser();
    const after = lastId();
    await request(kit.app).post("/api/auth/email-otp/send-verification-otp").send({ email, type: "sign-in" }).expect(200);
    const otp = /^\d{6}$/m.exec((await mailAfter(email, "Your sign-in code", after)).text)?.[0] ?? "";
    const res = await request(kit.app).post("/api/auth/sign-in/email-otp").send({ email, otp }).expect(200);
    expect(res.body).toEqual({ twoFactorRedirect: true, twoFactorMethods: ["otp"] });
    expect(sessionCookie(res)).toBeUndefined();
  });
});
