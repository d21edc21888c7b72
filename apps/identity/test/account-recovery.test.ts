import { startMailCatcher } from "@app/mailer/catcher";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { identityKit, sessionCookie, signUp } from "./kit.js";
import { linkOf, type MailKit, mailKit, pathOf } from "./mail-kit.js";

let kit: MailKit;
beforeAll(async () => {
  kit = await mailKit();
});
afterAll(async () => {
  await kit?.close();
});

const PASSWORD = "correct horse battery";

describe("password reset over real SMTP", () => {
  it("mails a single-use link; the link redirects with the token; reset ends every session", async () => {
    const { cookie, body } = await signUp(kit.app);
    const second = await request(kit.app).post("/api/auth/sign-in/email").send({ email: body.email, password: PASSWORD }).expect(200);
    const res = await request(kit.app)
      .post("/api/auth/request-password-reset")
      .send({ email: body.email, redirectTo: "http://localhost:5173/reset-password" })
      .expect(200);
    expect(res.body.status).toBe(true);
    const mail = await kit.mailTo(body.email, "Reset");
    expect(mail.html).toContain("Reset password");
    const link = linkOf(mail);
    expect(link).toMatch(/^http:\/\/localhost:\d+\/api\/auth\/reset-password\/[\w-]{43}\?callbackURL=/);
    const token = new URL(link).pathname.split("/").pop() ?? "";
    // Only a MAC of the token is stored.
    const rows = await kit.db.prisma.verification.findMany({ where: { purpose: "reset-password" } });
    expect(JSON.stringify(rows)).not.toContain(token);

    const hop = await request(kit.app).get(pathOf(link)).expect(302);
    expect(hop.headers.location).toBe(`http://localhost:5173/reset-password?token=${token}`);

    await request(kit.app)
      .post("/api/auth/reset-password")
      .send({ newPassword: "a brand new secret", token })
      .expect(200, { status: true });
    for (const c of [cookie, sessionCookie(second) ?? ""])
      await request(kit.app).post("/api/auth/get-session").set("cookie", c).expect(401);
    await request(kit.app).post("/api/auth/sign-in/email").send({ email: body.email, password: PASSWORD }).expect(401);
    await request(kit.app).post("/api/auth/sign-in/email").send({ email: body.email, password: "a brand new secret" }).expect(200);

    // The token is spent: the link now redirects with an error, and a second reset is refused.
    const again = await request(kit.app).get(pathOf(link)).expect(302);
    expect(again.headers.location).toBe("http://localhost:5173/reset-password?error=INVALID_TOKEN");
    const reuse = await request(kit.app).post("/api/auth/reset-password").send({ newPassword: "another new secret", token }).expect(400);
    expect(reuse.body.code).toBe("invalid_token");
  });

  it("a token works once even when two resets race", async () => {
    const { body } = await signUp(kit.app);
    await request(kit.app).post("/api/auth/request-password-reset").send({ email: body.email }).expect(200);
    const token = new URL(linkOf(await kit.mailTo(body.email, "Reset"))).pathname.split("/").pop() ?? "";
    const results = await Promise.all(
      ["first new password", "second new password"].map((newPassword) =>
        request(kit.app).post("/api/auth/reset-password").send({ newPassword, token }),
      ),
    );
    expect(results.map((r) => r.status).sort()).toEqual([200, 400]);
  });

  it("answers the same for an unknown address and sends nothing", async () => {
    const before = kit.catcher.messages().length;
    const res = await request(kit.app).post("/api/auth/request-password-reset").send({ email: "nobody-here@example.com" }).expect(200);
    expect(res.body.status).toBe(true);
    await kit.settled();
    expect(kit.catcher.messages().length).toBe(before);
  });

  it("refuses a callback on another site (no open redirect) and a malformed or expired token", async () => {
    const { body } = await signUp(kit.app);
    const evil = await request(kit.app)
      .post("/api/auth/request-password-reset")
      .send({ email: body.email, redirectTo: "https://evil.example/x" });
    expect(evil.status).toBe(403);
    await request(kit.app).get("/api/auth/reset-password/abc?callbackURL=https://evil.example/").expect(403);
    const bad = await request(kit.app).get("/api/auth/reset-password/not-a-token?callbackURL=/reset").expect(302);
    expect(bad.headers.location).toMatch(/\/reset\?error=INVALID_TOKEN$/);
    await request(kit.app).post("/api/auth/reset-password").send({ newPassword: "long enough pw" }).expect(400);
  });

  it("expires the link after an hour", async () => {
    let now = Date.now();
    const timed = await mailKit({ now: () => now });
    try {
      const { body } = await signUp(timed.app);
      await request(timed.app).post("/api/auth/request-password-reset").send({ email: body.email }).expect(200);
      const token = new URL(linkOf(await timed.mailTo(body.email, "Reset"))).pathname.split("/").pop() ?? "";
      now += 60 * 60 * 1000 + 1;
      const res = await request(timed.app).post("/api/auth/reset-password").send({ newPassword: "a brand new secret", token }).expect(400);
      expect(res.body.code).toBe("invalid_token");
    } finally {
      await timed.close();
    }
  });
});

describe("email verification", () => {
  it("sign-up mails a verification link; opening it marks the email verified and get-session says so", async () => {
    const { cookie, body } = await signUp(kit.app);
    const link = linkOf(await kit.mailTo(body.email, "Verify"));
    expect(new URL(link).pathname).toBe("/api/auth/verify-email");
    let session = await request(kit.app).get("/api/auth/get-session").set("cookie", cookie).expect(200);
    expect(session.body.user.emailVerified).toBe(false);
    // Opened where its user is signed in, the link works at once (a GET without that session
    // shows the confirmation page: test/pre-account-takeover.test.ts).
    const res = await request(kit.app).get(pathOf(link)).set("cookie", cookie).expect(302);
    expect(res.headers.location).toMatch(/^http:\/\/localhost:\d+\/$/);
    session = await request(kit.app).get("/api/auth/get-session").set("cookie", cookie).expect(200);
    expect(session.body.user.emailVerified).toBe(true);
    // Single use.
    const again = await request(kit.app).get(pathOf(link)).set("cookie", cookie).expect(302);
    expect(again.headers.location).toMatch(/\?error=INVALID_TOKEN$/);
  });

  it("send-verification-email answers 200 alike for unknown, verified and unverified addresses; a POST without callbackURL answers JSON", async () => {
    await request(kit.app).post("/api/auth/send-verification-email").send({ email: "ghost@example.com" }).expect(200, { status: true });
    const { body } = await signUp(kit.app);
    await kit.mailTo(body.email, "Verify");
    // Within a minute of the sign-up mail no second one is sent (the first link still works).
    await request(kit.app).post("/api/auth/send-verification-email").send({ email: body.email }).expect(200, { status: true });
    const mails = kit.catcher.messages().filter((m) => m.to.includes(body.email));
    expect(mails).toHaveLength(1);
    const token = new URL(linkOf(mails[0] as never)).searchParams.get("token") ?? "";
    const res = await request(kit.app).post("/api/auth/verify-email").send({ token, password: PASSWORD }).expect(200);
    expect(res.body).toEqual({ status: true, user: expect.objectContaining({ email: body.email, emailVerified: true }) });
    const bad = await request(kit.app).get("/api/auth/verify-email?token=nope").expect(400);
    expect(bad.body.code).toBe("invalid_token");
  });
});

describe("change-email", () => {
  it("needs a session; a free and a taken new address alike get nothing, the current address gets the link (test/email-change.test.ts)", async () => {
    await request(kit.app).post("/api/auth/change-email").send({ newEmail: "x@example.com" }).expect(401);
    const a = await signUp(kit.app);
    const b = await signUp(kit.app);
    const free = `free-${Date.now()}@example.com`;
    for (const newEmail of [b.body.email, free]) {
      await request(kit.app).post("/api/auth/change-email").set("cookie", a.cookie).send({ newEmail }).expect(200, { status: true });
    }
    await kit.settled();
    const mails = kit.catcher.messages();
    expect(mails.filter((m) => m.to.includes(free) || (m.to.includes(b.body.email) && m.subject.includes("change")))).toHaveLength(0);
    expect(mails.filter((m) => m.to.includes(a.body.email) && m.subject.includes("Confirm the change"))).toHaveLength(2);
  });
});

/** Polls until `check` holds (the outbox worker runs on its own schedule). */
async function until(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("a failing SMTP server", () => {
  it("answers 200 for known and unknown addresses alike; the mail waits and goes out once the server accepts again", async () => {
    const { body } = await signUp(kit.app);
    await kit.mailTo(body.email, "Verify");
    kit.catcher.setFailing(true);
    try {
      const known = await request(kit.app).post("/api/auth/request-password-reset").send({ email: body.email });
      const unknown = await request(kit.app).post("/api/auth/request-password-reset").send({ email: "nobody-at-all@example.com" });
      expect([known.status, unknown.status]).toEqual([200, 200]);
      expect(known.body).toEqual(unknown.body);
      // Refused (451) and retried: the row stays pending with the reply code as its error.
      await until(async () => (await kit.db.prisma.mailOutbox.count({ where: { kind: "reset-password", attempts: { gte: 2 } } })) > 0);
      const [row] = await kit.db.prisma.mailOutbox.findMany({ where: { kind: "reset-password", state: { in: ["pending", "sending"] } } });
      expect(row?.lastError).toBe("mail could not be sent (451)");
    } finally {
      kit.catcher.setFailing(false);
    }
    const link = linkOf(await kit.mailTo(body.email, "Reset"));
    await request(kit.app).get(pathOf(link)).expect(302);
    await kit.settled();
  });

  it("answers 200 while the SMTP server is down (connection refused); the mail arrives when it is back", async () => {
    const down = await mailKit();
    try {
      const port = down.catcher.port;
      await down.catcher.close();
      const { body } = await signUp(down.app);
      const known = await request(down.app).post("/api/auth/request-password-reset").send({ email: body.email }).expect(200);
      const unknown = await request(down.app)
        .post("/api/auth/request-password-reset")
        .send({ email: "nobody-else@example.com" })
        .expect(200);
      expect(known.body).toEqual(unknown.body);
      await until(async () => (await down.db.prisma.mailOutbox.count({ where: { kind: "reset-password", attempts: { gte: 2 } } })) > 0);
      // The stored error names the failure, never the SMTP credentials.
      const rows = await down.db.prisma.mailOutbox.findMany();
      expect(JSON.stringify(rows)).not.toContain("secret");
      expect(down.logs.join("")).not.toContain("secret@");
      const back = await startMailCatcher({ port });
      try {
        const mail = await back.waitFor((m) => m.to.includes(body.email) && m.subject.includes("Reset"));
        expect(linkOf(mail)).toMatch(/\/api\/auth\/reset-password\/[\w-]{43}\?/);
        await down.settled();
      } finally {
        await back.close();
      }
    } finally {
      await down.close().catch(() => undefined);
    }
  });

  it("without SMTP_URL the mail routes answer 503 for every address, and sign-up still works", async () => {
    const plain = await identityKit();
    try {
      const { body } = await signUp(plain.app);
      for (const email of [body.email, "nobody-either@example.com"]) {
        const res = await request(plain.app).post("/api/auth/request-password-reset").send({ email }).expect(503);
        expect(res.body.code).toBe("mail_unavailable");
      }
      expect(await plain.db.prisma.mailOutbox.count()).toBe(0);
    } finally {
      await plain.close();
    }
  });
});

describe("rate limits of the mail routes", () => {
  it("limits per address (known or unknown alike) and per IP with 429", async () => {
    const limited = await mailKit({ env: { RATE_LIMIT_MAIL_ADDRESS_MAX: "2", RATE_LIMIT_MAIL_IP_MAX: "5" } });
    try {
      const { body } = await signUp(limited.app);
      for (const email of [body.email, "unknown-person@example.com"]) {
        for (let i = 0; i < 2; i += 1) await request(limited.app).post("/api/auth/request-password-reset").send({ email }).expect(200);
        const res = await request(limited.app).post("/api/auth/request-password-reset").send({ email }).expect(429);
        expect(res.body.code).toBe("rate_limited");
        expect(res.headers["retry-after"]).toBeDefined();
      }
      // The IP's quota (5) is spent by now whatever the address.
      await request(limited.app).post("/api/auth/send-verification-email").send({ email: "fresh@example.com" }).expect(429);
    } finally {
      await limited.close();
    }
  });
});
