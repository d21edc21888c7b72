import request from "supertest";
import { expect } from "vitest";
import { ORIGIN, signUp } from "./kit.js";
import { linkOf, type MailKit, mailKit } from "./mail-kit.js";

// What the organization tests share: an identity sending mail to a real catcher, people signed
// up (and verified through the mailed link), and requests as one of them.

/** Mail limits out of the way: the tests invite many addresses from one IP. */
export const ORG_LIMITS = { RATE_LIMIT_MAIL_IP_MAX: "100000", RATE_LIMIT_MAIL_ADDRESS_MAX: "100000", MAIL_BUDGET_PER_HOUR: "100000" };

/** A mail kit whose clock a test can move (`clock.offset` ms ahead of real time). */
export async function orgKit(): Promise<{ kit: MailKit; clock: { offset: number } }> {
  const clock = { offset: 0 };
  const kit = await mailKit({ now: () => Date.now() + clock.offset, env: ORG_LIMITS });
  return { kit, clock };
}

/** One signed-in person and their requests. */
export interface Person {
  id: string;
  email: string;
  cookie: string;
  get(path: string): request.Test;
  post(path: string, body?: object): request.Test;
}

let n = 0;
/** A new address. */
export const fresh = (label: string) => `${label}-${++n}-${Date.now()}@example.com`;

/** Requests under /api/auth/organization as the holder of `cookie`. */
export function as(kit: MailKit, id: string, email: string, cookie: string): Person {
  return {
    id,
    email,
    cookie,
    get: (path) => request(kit.app).get(`/api/auth/organization/${path}`).set("cookie", cookie),
    post: (path, body = {}) => request(kit.app).post(`/api/auth/organization/${path}`).set("cookie", cookie).send(body),
  };
}

/** Signs a person up; with `verified` (the default) they open the mailed verification link too. */
export async function person(kit: MailKit, options: { email?: string; verified?: boolean } = {}): Promise<Person> {
  const email = options.email ?? fresh("person");
  const { cookie, user } = await signUp(kit.app, { email });
  if (options.verified !== false) {
    const token = new URL(linkOf(await kit.mailTo(email, "Verify your email address"))).searchParams.get("token") ?? "";
    await request(kit.app)
      .post(`/api/auth/verify-email?token=${encodeURIComponent(token)}`)
      .set("cookie", cookie)
      .send({})
      .expect(200);
  }
  return as(kit, user.id, email, cookie);
}

/** The session as get-session shows it. */
export async function sessionOf(kit: MailKit, who: Person): Promise<{ activeOrganizationId: string | null; activeTeamId: string | null }> {
  const res = await request(kit.app).get("/api/auth/get-session").set("cookie", who.cookie).expect(200);
  return res.body.session;
}

/** Creates an organization as `owner` and returns its answer. */
export async function createOrg(owner: Person, name = "Acme"): Promise<{ id: string; slug: string; members: { id: string }[] }> {
  const slug = fresh("org").replace(/@.*/, "").toLowerCase();
  const res = await owner.post("create", { name, slug }).expect(200);
  return res.body;
}

/** `[status, message]` of an answer, for refusals. */
export const refusal = (res: request.Response) => [res.status, res.body.message];

/** Invites `email` with `role` into `organizationId` and returns the id the mailed link carries. */
export async function invite(kit: MailKit, by: Person, organizationId: string, email: string, role = "member"): Promise<string> {
  const res = await by.post("invite-member", { email, role, organizationId }).expect(200);
  const link = linkOf(await kit.mailTo(email, "You are invited to an organization"));
  expect(link).toBe(`${ORIGIN}/accept-invitation/${res.body.id}`);
  return res.body.id;
}

/** Makes `who` a member of `organizationId` with `role` through a mailed invitation. */
export async function join(kit: MailKit, owner: Person, organizationId: string, who: Person, role = "member"): Promise<string> {
  const id = await invite(kit, owner, organizationId, who.email, role);
  const res = await who.post("accept-invitation", { invitationId: id }).expect(200);
  return res.body.member.id;
}
