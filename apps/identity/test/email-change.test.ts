import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sessionCookie, signUp } from "./kit.js";
import { linkOf, type MailKit, mailKit, pathOf, TEST_WORKER_OPTIONS } from "./mail-kit.js";

// Issue 20 item 4: a session alone never moves an account to another address. The current
// address confirms first; the new address then gets its link; the old address is told once the
// change is done, with a link that takes it back (and ends every session) for 7 days. A GET of
// any of these links changes nothing: the page asks for the click that POSTs it.
const PASSWORD = "correct horse battery";
const CALLBACK = "http://localhost:5173/?email-changed=1";
let kit: MailKit;
let n = 0;

beforeAll(async () => {
  kit = await mailKit();
});
afterAll(async () => {
  await kit?.close();
});

function fresh(label: string): string {
  n += 1;
  return `${label}-${n}-${Date.now()}@example.com`;
}

/** The POST a browser sends for the confirmation page's form: the page's query, no body, its own origin. */
async function click(link: string, cookie = "", on: MailKit = kit) {
  const page = await request(on.app).get(pathOf(link)).set("cookie", cookie);
  expect(page.status).toBe(200);
  expect(page.headers["content-type"]).toMatch(/^text\/html/);
  const action = /action="\?([^"]+)"/.exec(page.text)?.[1]?.replaceAll("&amp;", "&") ?? "";
  return request(on.app).post(`/api/auth/verify-email?${action}`).set("cookie", cookie).set("origin", new URL(link).origin);
}

const emailOf = async (id: string) => (await kit.db.prisma.user.findUniqueOrThrow({ where: { id } })).email;

/** Signs up and asks to move to a new address; returns the mail that went to the current address. */
async function askToMove() {
  const owner = await signUp(kit.app, { email: fresh("owner") });
  const newEmail = fresh("new");
  const asked = await request(kit.app)
    .post("/api/auth/change-email")
    .set("cookie", owner.cookie)
    .send({ newEmail, callbackURL: CALLBACK })
    .expect(200);
  expect(asked.body).toEqual({ status: true });
  return { owner, newEmail, confirm: await kit.mailTo(owner.body.email, "Confirm the change") };
}

describe("change-email is confirmed from the current address", () => {
  it("a session alone moves nothing: the link goes to the current address, none to the new one", async () => {
    const { owner, newEmail, confirm } = await askToMove();
    expect(confirm.text).toContain("a second link then goes to the new address");
    await kit.settled();
    expect(kit.catcher.messages().filter((m) => m.to.includes(newEmail))).toHaveLength(0);
    expect(await emailOf(owner.user.id)).toBe(owner.body.email);
  });

  it("every GET changes nothing; the clicks confirm, move the account and tell the old address", async () => {
    const { owner, newEmail, confirm } = await askToMove();
    // A prefetch of the current address's link: the page, and no mail to the new address.
    const prefetch = await request(kit.app).get(pathOf(linkOf(confirm)));
    expect(prefetch.status).toBe(200);
    expect(prefetch.text).toContain(newEmail);
    await kit.settled();
    expect(kit.catcher.messages().filter((m) => m.to.includes(newEmail))).toHaveLength(0);

    const confirmed = await click(linkOf(confirm));
    expect(confirmed.status).toBe(200);
    expect(confirmed.text).toContain(`A link is on its way to ${newEmail}`);
    const verify = await kit.mailTo(newEmail, "Confirm your new email");
    expect((await request(kit.app).get(pathOf(linkOf(verify)))).status).toBe(200);
    expect(await emailOf(owner.user.id)).toBe(owner.body.email);

    const moved = await click(linkOf(verify));
    expect(moved.status).toBe(303);
    expect(moved.headers.location).toBe(CALLBACK);
    expect(await emailOf(owner.user.id)).toBe(newEmail);
    // The owner's session stays; the new address signs in, the old one no longer does.
    await request(kit.app).get("/api/auth/get-session").set("cookie", owner.cookie).expect(200);
    await request(kit.app).post("/api/auth/sign-in/email").send({ email: newEmail, password: PASSWORD }).expect(200);
    await request(kit.app).post("/api/auth/sign-in/email").send({ email: owner.body.email, password: PASSWORD }).expect(401);

    const told = await kit.mailTo(owner.body.email, "was changed");
    expect(told.text).toContain("within 7 days");
    expect(new URL(linkOf(told)).searchParams.get("token")).toBeTruthy();
  });

  it("each click's next mail leaves at once, not at the worker's next poll", async () => {
    // A worker that would not poll again during the test: only the wake after each commit sends.
    const slow = await mailKit({ worker: { ...TEST_WORKER_OPTIONS, pollMs: 600_000 } });
    try {
      const owner = await signUp(slow.app, { email: fresh("prompt") });
      const newEmail = fresh("prompt-new");
      await request(slow.app)
        .post("/api/auth/change-email")
        .set("cookie", owner.cookie)
        .send({ newEmail, callbackURL: CALLBACK })
        .expect(200);
      const confirm = await slow.mailTo(owner.body.email, "Confirm the change");
      expect((await click(linkOf(confirm), "", slow)).status).toBe(200);
      const verify = await slow.mailTo(newEmail, "Confirm your new email");
      expect((await click(linkOf(verify), "", slow)).status).toBe(303);
      await slow.mailTo(owner.body.email, "was changed");
    } finally {
      await slow.close();
    }
  });

  it("opened where the owner is signed in, the current and new addresses' links work at once (better-auth's flow)", async () => {
    const { owner, newEmail, confirm } = await askToMove();
    const confirmed = await request(kit.app)
      .get(pathOf(linkOf(confirm)))
      .set("cookie", owner.cookie)
      .expect(200);
    expect(confirmed.text).toContain(`A link is on its way to ${newEmail}`);
    const moved = await request(kit.app)
      .get(pathOf(linkOf(await kit.mailTo(newEmail, "Confirm your new email"))))
      .set("cookie", owner.cookie)
      .expect(302);
    expect(moved.headers.location).toBe(CALLBACK);
    expect(await emailOf(owner.user.id)).toBe(newEmail);
  });

  it("a new address taken by the time the current one confirms gets no mail, and the answer is the same", async () => {
    const { owner, newEmail, confirm } = await askToMove();
    await signUp(kit.app, { email: newEmail });
    await kit.mailTo(newEmail, "Verify"); // its own sign-up's mail
    const before = kit.catcher.messages().filter((m) => m.to.includes(newEmail)).length;
    const confirmed = await click(linkOf(confirm));
    expect(confirmed.text).toContain(`A link is on its way to ${newEmail}`);
    await kit.settled();
    expect(kit.catcher.messages().filter((m) => m.to.includes(newEmail))).toHaveLength(before);
    expect(await emailOf(owner.user.id)).toBe(owner.body.email);
  });
});

describe("the old address's revert link", () => {
  /** Moves an account to a new address through every link; returns the revert mail. */
  async function moved() {
    const { owner, newEmail, confirm } = await askToMove();
    await click(linkOf(confirm));
    await click(linkOf(await kit.mailTo(newEmail, "Confirm your new email")));
    return { owner, newEmail, revert: linkOf(await kit.mailTo(owner.body.email, "was changed")) };
  }

  it("a GET, even signed in, changes nothing; the click brings the address back and ends every session and the password", async () => {
    const { owner, newEmail, revert } = await moved();
    const other = sessionCookie(
      await request(kit.app).post("/api/auth/sign-in/email").send({ email: newEmail, password: PASSWORD }).expect(200),
    );
    const page = await request(kit.app).get(pathOf(revert)).set("cookie", owner.cookie).expect(200);
    expect(page.text).toContain("Take my account back");
    expect(await emailOf(owner.user.id)).toBe(newEmail);

    const back = await click(revert);
    expect(back.status).toBe(303);
    const next = new URL(back.headers.location ?? "");
    expect(`${next.origin}${next.pathname}`).toBe("http://localhost:5173/reset-password");
    expect(await emailOf(owner.user.id)).toBe(owner.body.email);
    for (const cookie of [owner.cookie, other ?? ""])
      await request(kit.app).post("/api/auth/get-session").set("cookie", cookie).expect(401);
    for (const email of [owner.body.email, newEmail])
      await request(kit.app).post("/api/auth/sign-in/email").send({ email, password: PASSWORD }).expect(401);
    expect(await kit.db.prisma.account.count({ where: { userId: owner.user.id } })).toBe(0);

    const token = next.searchParams.get("token") ?? "";
    await request(kit.app).post("/api/auth/reset-password").send({ token, newPassword: "mine again, for good" }).expect(200);
    await request(kit.app).post("/api/auth/sign-in/email").send({ email: owner.body.email, password: "mine again, for good" }).expect(200);
    // Spent.
    const spent = await request(kit.app).get(pathOf(revert)).expect(302);
    expect(spent.headers.location).toBe(`${CALLBACK}&error=INVALID_TOKEN`);
  });

  it("outlives a later change, reset or verification, and works for 7 days only", async () => {
    let now = Date.now();
    const timed = await mailKit({ now: () => now });
    const local = kit;
    kit = timed;
    try {
      const { owner, newEmail, revert } = await moved();
      // Whoever moved the account resets its password from the new address: the revert link stays.
      await request(kit.app).post("/api/auth/request-password-reset").send({ email: newEmail }).expect(200);
      const reset = new URL(linkOf(await kit.mailTo(newEmail, "Reset"))).pathname.split("/").pop() ?? "";
      await request(kit.app).post("/api/auth/reset-password").send({ token: reset, newPassword: "the mover's password" }).expect(200);
      const found = await kit.db.prisma.verification.count({ where: { userId: owner.user.id, purpose: "revert-email-change" } });
      expect(found).toBe(1);
      now += 7 * 24 * 60 * 60 * 1000 + 1;
      const late = await request(kit.app).get(pathOf(revert)).expect(302);
      expect(late.headers.location).toBe(`${CALLBACK}&error=INVALID_TOKEN`);
      expect(await emailOf(owner.user.id)).toBe(newEmail);
    } finally {
      kit = local;
      await timed.close();
    }
  });
});
