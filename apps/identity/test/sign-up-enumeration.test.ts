import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createAuthClient } from "better-auth/client";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sessionCookie } from "./kit.js";
import { linkOf, type MailKit, mailKit, pathOf } from "./mail-kit.js";

// Sign-up must not tell a stranger whether an address is registered when REQUIRE_EMAIL_VERIFICATION
// is on (services/verified-sign-up.ts); with it off, a taken address still answers 409.

const PASSWORD = "correct horse battery";
let counter = 0;
const address = () => `enum${++counter}-${Date.now()}@example.com`;

describe("sign-up with REQUIRE_EMAIL_VERIFICATION=true", () => {
  let kit: MailKit;
  beforeAll(async () => {
    kit = await mailKit({ env: { REQUIRE_EMAIL_VERIFICATION: "true" } });
  });
  afterAll(async () => {
    await kit?.close();
  });

  it("answers a new and a taken address alike, signs nobody in, and mails the owner instead", async () => {
    const email = address();
    const fresh = await request(kit.app).post("/api/auth/sign-up/email").send({ email, password: PASSWORD, name: "Owner" });
    const taken = await request(kit.app)
      .post("/api/auth/sign-up/email")
      .send({ email, password: "an attacker's password", name: "Mallory" });

    for (const res of [fresh, taken]) {
      expect(res.status).toBe(200);
      expect(res.headers["set-cookie"]).toBeUndefined();
      expect(sessionCookie(res)).toBeUndefined();
      expect(Object.keys(res.body).sort()).toEqual(["token", "user"]);
      expect(res.body.token).toBeNull();
      expect(res.body.user.email).toBe(email);
      expect(res.body.user.emailVerified).toBe(false);
    }
    expect(Object.keys(taken.body.user).sort()).toEqual(Object.keys(fresh.body.user).sort());

    // The taken answer carries nothing of the real account: a synthetic id, the submitted name.
    const rows = await kit.db.prisma.user.findMany({ where: { email } });
    expect(rows).toHaveLength(1);
    const [owner] = rows;
    expect(fresh.body.user.id).toBe(owner?.id);
    expect(taken.body.user.id).not.toBe(owner?.id);
    expect(taken.body.user.name).toBe("Mallory");
    expect(owner?.name).toBe("Owner");
    expect(await kit.db.prisma.user.findUnique({ where: { id: taken.body.user.id } })).toBeNull();

    // The new account gets its verification mail; the owner gets the "someone tried" mail with a working reset link.
    await kit.mailTo(email, "Verify");
    const warning = await kit.mailTo(email, "Someone tried");
    expect(warning.text).toContain("No account was created");
    const link = linkOf(warning);
    expect(link).toMatch(/\/api\/auth\/reset-password\/[\w-]{43}\?callbackURL=/);
    const hop = await request(kit.app).get(pathOf(link)).expect(302);
    expect(hop.headers.location).toMatch(/\/reset-password\?token=[\w-]{43}$/);

    // The attempt changed nothing: the owner's password still holds, the attacker's does not.
    const attacker = await request(kit.app).post("/api/auth/sign-in/email").send({ email, password: "an attacker's password" });
    expect(attacker.status).toBe(401);
    const own = await request(kit.app).post("/api/auth/sign-in/email").send({ email, password: PASSWORD });
    expect(own.status).toBe(403);
    expect(own.body.code).toBe("email_not_verified");
  });

  it("mails the owner at most once a minute however many sign-ups are tried", async () => {
    const email = address();
    await request(kit.app).post("/api/auth/sign-up/email").send({ email, password: PASSWORD, name: "Owner" }).expect(200);
    await request(kit.app).post("/api/auth/sign-up/email").send({ email, password: PASSWORD, name: "Again" }).expect(200);
    await kit.mailTo(email, "Someone tried");
    for (let i = 0; i < 3; i += 1)
      await request(kit.app).post("/api/auth/sign-up/email").send({ email, password: PASSWORD, name: "Again" }).expect(200);
    // A later mail, sent after those attempts, shows their background work has had its turn.
    const other = address();
    await request(kit.app).post("/api/auth/sign-up/email").send({ email: other, password: PASSWORD, name: "Other" }).expect(200);
    await kit.mailTo(other, "Verify");
    const warnings = kit.catcher.messages().filter((m) => m.to.includes(email) && m.subject.includes("Someone tried"));
    expect(warnings).toHaveLength(1);
  });

  it("limits sign-ups per address like the mail routes: the sixth in an hour answers 429, taken or not", async () => {
    const email = address();
    const statuses: number[] = [];
    for (let i = 0; i < 6; i += 1) {
      const res = await request(kit.app)
        .post("/api/auth/sign-up/email")
        .send({ email, password: PASSWORD, name: `Try ${i}` });
      statuses.push(res.status);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    await kit.mailTo(email, "Verify");
    await kit.mailTo(email, "Someone tried");
  });

  it("keeps better-auth's client working: signUp.email resolves with token null for either address", async () => {
    const server: Server = createServer(kit.app);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const client = createAuthClient({ baseURL });
      const email = address();
      for (const name of ["First", "Second"]) {
        const { data, error } = await client.signUp.email({ email, password: PASSWORD, name });
        expect(error).toBeNull();
        expect(data?.token).toBeNull();
        expect(data?.user.email).toBe(email);
      }
      // Both background mails go out before the server closes.
      await kit.mailTo(email, "Verify");
      await kit.mailTo(email, "Someone tried");
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

describe("sign-up with REQUIRE_EMAIL_VERIFICATION off (the default)", () => {
  it("still answers 409 email_taken: an identical answer would sign someone into another's account", async () => {
    const kit = await mailKit();
    try {
      const email = address();
      const first = await request(kit.app).post("/api/auth/sign-up/email").send({ email, password: PASSWORD, name: "Owner" }).expect(200);
      expect(sessionCookie(first)).toBeDefined();
      const again = await request(kit.app).post("/api/auth/sign-up/email").send({ email, password: PASSWORD, name: "Again" }).expect(409);
      expect(again.body.code).toBe("email_taken");
      expect(await kit.db.prisma.user.count({ where: { email } })).toBe(1);
    } finally {
      await kit.close();
    }
  });
});
