import { randomUUID } from "node:crypto";
import { createLogger } from "@app/http-kit";
import { createMailer, type Mailer } from "@app/mailer";
import { startMailCatcher } from "@app/mailer/catcher";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runHousekeeping } from "../src/housekeeping.js";
import type { TokenMail } from "../src/services/mail-outbox.js";
import { MailOutboxWorker, retryDelayMs } from "../src/services/mail-outbox-worker.js";
import { frozenClock, identityKit, type Kit, signUp } from "./kit.js";
import { linkOf, mailKit, pathOf, TEST_WORKER_OPTIONS } from "./mail-kit.js";

// The outbox of account mails (services/mail-outbox.ts, services/mail-outbox-worker.ts) on real
// PostgreSQL and a real SMTP catcher: what a row holds, retries and giving up, two instances
// draining one outbox, a dead worker's lease, the per-address budget and the purge.

const silent = createLogger({ name: "t", level: "silent" });
const PASSWORD = "correct horse battery";
const tag = Date.now().toString(36);

/** Polls until `check` holds. */
async function until(check: () => Promise<boolean> | boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A user inserted directly (no sign-up mail). */
async function user(kit: Kit, name: string) {
  return kit.db.prisma.user.create({ data: { id: randomUUID(), email: `${name}-${tag}@example.com`, name } });
}

/** A reset mail for `u`. */
const resetMail = (u: { id: string; email: string }): TokenMail => ({
  kind: "reset-password",
  purpose: "reset-password",
  userId: u.id,
  to: u.email,
  link: (token) => `http://localhost:3000/api/auth/reset-password/${token}`,
});

/** Queues a reset mail for `u` straight through the outbox (no route, no rate limit). */
function queueReset(kit: Kit, u: { id: string; email: string }) {
  return kit.service.mailOutbox.enqueueTokenMail(resetMail(u));
}

describe("what an outbox row holds", () => {
  it("the recipient and the link only sealed while the mail waits, neither once it is sent", async () => {
    const catcher = await startMailCatcher();
    const mailer = createMailer({ smtpUrl: catcher.url, from: "Accounts <no-reply@example.com>" });
    // No worker yet: the row waits as the request left it.
    const kit = await identityKit({ mailer });
    try {
      const u = await user(kit, "sealed");
      await request(kit.app).post("/api/auth/request-password-reset").send({ email: u.email }).expect(200);
      const [waiting] = await kit.db.prisma.mailOutbox.findMany();
      expect(waiting).toMatchObject({ state: "pending", kind: "reset-password", attempts: 0 });
      expect(waiting?.payload).toMatch(/^v1\./);
      expect(JSON.stringify(waiting)).not.toContain(u.email);
      expect(waiting?.recipientKey).toBe(kit.service.mailOutbox.recipientKey(u.email));
      // The token's row and the mail's row were written together.
      expect(await kit.db.prisma.verification.count({ where: { userId: u.id, purpose: "reset-password" } })).toBe(1);

      const worker = new MailOutboxWorker({ outbox: kit.service.mailOutbox, mailer, logger: silent, options: TEST_WORKER_OPTIONS });
      worker.start();
      try {
        const mail = await catcher.waitFor((m) => m.to.includes(u.email));
        const token = new URL(linkOf(mail)).pathname.split("/").pop() ?? "";
        expect(JSON.stringify(waiting)).not.toContain(token);
        await until(async () => (await kit.db.prisma.mailOutbox.count({ where: { state: "sent" } })) === 1);
        const [sent] = await kit.db.prisma.mailOutbox.findMany();
        expect(sent).toMatchObject({ state: "sent", payload: null, attempts: 1, lastError: null });
        expect(sent?.sentAt).toBeInstanceOf(Date);
        await request(kit.app)
          .get(pathOf(linkOf(mail)))
          .expect(302);
      } finally {
        await worker.stop();
      }
    } finally {
      await kit.close();
      mailer.close();
      await catcher.close();
    }
  });
});

describe("inside a caller's transaction", () => {
  it("a mail queued in a transaction that rolls back leaves no row and no token; one that commits goes out", async () => {
    const kit = await mailKit();
    try {
      const [gone, kept] = [await user(kit, "rolled-back"), await user(kit, "committed")];
      await expect(
        kit.db.prisma.$transaction(async (tx) => {
          await kit.service.mailOutbox.enqueueTokenMail(resetMail(gone), tx);
          throw new Error("the caller's work failed");
        }),
      ).rejects.toThrow("the caller's work failed");
      expect(await kit.db.prisma.verification.count({ where: { userId: gone.id } })).toBe(0);
      await kit.db.prisma.$transaction((tx) => kit.service.mailOutbox.enqueueTokenMail(resetMail(kept), tx));
      kit.service.mailOutbox.wake();
      await kit.mailTo(kept.email, "Reset");
      await kit.settled();
      expect(await kit.db.prisma.mailOutbox.count()).toBe(1);
      expect(kit.catcher.messages().filter((m) => m.to.includes(gone.email))).toHaveLength(0);
    } finally {
      await kit.close();
    }
  });
});

describe("retries", () => {
  it("waits longer after each failure: base, doubling, capped", () => {
    expect([1, 2, 3, 4, 5, 6].map((n) => retryDelayMs(n, 15_000, 600_000))).toEqual([15_000, 30_000, 60_000, 120_000, 240_000, 480_000]);
    expect(retryDelayMs(7, 15_000, 600_000)).toBe(600_000);
    expect(retryDelayMs(30, 15_000, 600_000)).toBe(600_000);
  });

  it("gives a mail up after the last attempt: dead, scrubbed, logged by row id and never by address", async () => {
    const kit = await mailKit({ worker: { maxAttempts: 3, retryBaseMs: 50, retryMaxMs: 100 } });
    try {
      kit.catcher.setFailing(true);
      const u = await user(kit, "refused");
      await request(kit.app).post("/api/auth/request-password-reset").send({ email: u.email }).expect(200);
      await until(async () => (await kit.db.prisma.mailOutbox.count({ where: { state: "dead" } })) === 1);
      const [row] = await kit.db.prisma.mailOutbox.findMany();
      expect(row).toMatchObject({ state: "dead", attempts: 3, payload: null, lastError: "mail could not be sent (451)" });
      const lines = kit.logs.filter((l) => l.includes("mail not sent; will retry") || l.includes("mail given up"));
      expect(lines.map((l) => JSON.parse(l).msg)).toEqual(["mail not sent; will retry", "mail not sent; will retry", "mail given up"]);
      expect(JSON.parse(lines[2] ?? "{}")).toMatchObject({ level: 50, mail: row?.id, attempts: 3 });
      expect(kit.logs.join("")).not.toContain(u.email);
      kit.catcher.setFailing(false);
      expect(kit.catcher.messages().filter((m) => m.to.includes(u.email))).toHaveLength(0);
    } finally {
      await kit.close();
    }
  });
});

describe("several identity instances", () => {
  let shared: Kit & { database: import("@app/db/testing").TestDatabase };
  let second: Kit;
  let mailers: Mailer[];
  let catcher: Awaited<ReturnType<typeof startMailCatcher>>;
  beforeAll(async () => {
    catcher = await startMailCatcher();
    mailers = [0, 1].map(() => createMailer({ smtpUrl: catcher.url, from: "Accounts <no-reply@example.com>" }));
    shared = await identityKit({ mailer: mailers[0] as Mailer });
    second = await identityKit({ mailer: mailers[1] as Mailer, database: shared.database });
  });
  afterAll(async () => {
    await second?.close();
    await shared?.close();
    for (const m of mailers ?? []) m.close();
    await catcher?.close();
  });

  it("two workers on one outbox send every mail exactly once (FOR UPDATE SKIP LOCKED)", async () => {
    const users = await Promise.all(Array.from({ length: 30 }, (_, i) => user(shared, `twice${i}`)));
    for (const u of users) expect(await queueReset(shared, u)).toBe("queued");
    const workers = [shared, second].map(
      (k, i) =>
        new MailOutboxWorker({
          outbox: k.service.mailOutbox,
          mailer: mailers[i] as Mailer,
          logger: silent,
          options: { ...TEST_WORKER_OPTIONS, batch: 3, pollMs: 10 },
        }),
    );
    for (const w of workers) w.start();
    try {
      await until(async () => (await shared.db.prisma.mailOutbox.count({ where: { state: "sent" } })) === users.length);
    } finally {
      await Promise.all(workers.map((w) => w.stop()));
    }
    const sent = catcher.messages().filter((m) => m.to.some((to) => to.startsWith("twice")));
    expect(sent).toHaveLength(users.length);
    expect(new Set(sent.map((m) => m.to[0])).size).toBe(users.length);
    expect(await shared.db.prisma.mailOutbox.count({ where: { attempts: { not: 1 } } })).toBe(0);
  });

  it("concurrent claims from two instances never hand out one mail twice", async () => {
    const users = await Promise.all(Array.from({ length: 40 }, (_, i) => user(shared, `race${i}`)));
    for (const u of users) await queueReset(shared, u);
    const claims = await Promise.all(Array.from({ length: 16 }, (_, i) => (i % 2 ? second : shared).service.mailOutbox.claim(5, 60_000)));
    const ids = claims.flat().map((m) => m.id);
    expect(ids).toHaveLength(40);
    expect(new Set(ids).size).toBe(40);
    // Hand them back so the other tests' workers see a clean outbox.
    await shared.db.prisma.mailOutbox.deleteMany({ where: { id: { in: ids } } });
  });

  it("a mail claimed by a worker that died is taken over once its lease runs out, and sent once", async () => {
    const u = await user(shared, "orphan");
    await queueReset(shared, u);
    // A worker claims it and dies before sending: the row stays `sending` until its lease ends.
    const [claimed] = await second.service.mailOutbox.claim(1, 300);
    expect(claimed?.to).toBe(u.email);
    const worker = new MailOutboxWorker({
      outbox: shared.service.mailOutbox,
      mailer: mailers[0] as Mailer,
      logger: silent,
      options: TEST_WORKER_OPTIONS,
    });
    worker.start();
    try {
      const mail = await catcher.waitFor((m) => m.to.includes(u.email));
      expect(linkOf(mail)).toContain("/api/auth/reset-password/");
      await until(async () => (await shared.db.prisma.mailOutbox.count({ where: { state: "sent", attempts: 2 } })) === 1);
    } finally {
      await worker.stop();
    }
    expect(catcher.messages().filter((m) => m.to.includes(u.email))).toHaveLength(1);
    // The dead worker's late report changes nothing: the row is no longer its claim.
    expect(await second.service.mailOutbox.sent(claimed as never)).toBe(false);
  });
});

describe("the per-address mail budget", () => {
  it("sign-up → delete-user → sign-up: at most MAIL_BUDGET_PER_HOUR mails to the address, whatever route causes them", async () => {
    const kit = await mailKit();
    try {
      expect(kit.config.mailBudgetPerHour).toBe(5);
      const email = `nobody-verified-${tag}@example.com`;
      for (let round = 0; round < 7; round += 1) {
        const { cookie } = await signUp(kit.app, { email });
        await request(kit.app).post("/api/auth/delete-user").set("cookie", cookie).send({ password: PASSWORD }).expect(200);
      }
      // Another route spends the same budget: the answer does not change.
      await signUp(kit.app, { email });
      const reset = await request(kit.app).post("/api/auth/request-password-reset").send({ email }).expect(200);
      expect(reset.body.status).toBe(true);
      await kit.settled();
      expect(kit.catcher.messages().filter((m) => m.to.includes(email))).toHaveLength(5);
      const states = await kit.db.prisma.mailOutbox.groupBy({ by: ["state"], _count: true });
      expect(Object.fromEntries(states.map((s) => [s.state, s._count]))).toEqual({ sent: 5, dropped: 4 });
      // Dropped mails are logged with a keyed hash of the address, never the address.
      const dropped = kit.logs.filter((l) => l.includes("over its mail budget")).map((l) => JSON.parse(l));
      expect(dropped).toHaveLength(4);
      expect(dropped[0]).toMatchObject({ recipient: kit.service.mailOutbox.recipientKey(email).slice(0, 16), kind: "verify-email" });
      expect(dropped[3]).toMatchObject({ kind: "reset-password" });
      expect(kit.logs.join("")).not.toContain(email);
      // No token was made for a dropped mail.
      const current = await kit.db.prisma.user.findUniqueOrThrow({ where: { email } });
      expect(await kit.db.prisma.verification.count({ where: { userId: current.id } })).toBe(0);
      // Other addresses keep their own budget.
      const other = await signUp(kit.app);
      await kit.mailTo(other.body.email, "Verify");
    } finally {
      await kit.close();
    }
  });

  it("counts the normalised address: another spelling of it spends the same budget", async () => {
    const kit = await mailKit({ env: { MAIL_BUDGET_PER_HOUR: "1" } });
    try {
      const u = await user(kit, "spelling");
      expect(await queueReset(kit, u)).toBe("queued");
      const shouting = { id: u.id, email: u.email.toUpperCase() };
      expect(await queueReset(kit, shouting)).toBe("dropped");
      await kit.settled();
    } finally {
      await kit.close();
    }
  });
});

describe("housekeeping", () => {
  it("deletes finished rows once the budget no longer counts them, and keeps mail still to send", async () => {
    const clock = frozenClock(Date.now());
    const catcher = await startMailCatcher();
    const mailer = createMailer({ smtpUrl: catcher.url, from: "Accounts <no-reply@example.com>" });
    const kit = await identityKit({ mailer, now: clock.now });
    try {
      const u = await user(kit, "purge");
      await queueReset(kit, u);
      await request(kit.app)
        .post("/api/auth/request-password-reset")
        .send({ email: `unknown-purge-${tag}@example.com` })
        .expect(200);
      clock.advance(60 * 60 * 1000 + 1);
      const round = await runHousekeeping(kit.service, { logger: silent, keyRotationMs: 0, organizations: kit.organizations });
      expect(round.purgedMails).toBe(1);
      expect((await kit.db.prisma.mailOutbox.findMany()).map((r) => r.state)).toEqual(["pending"]);
    } finally {
      await kit.close();
      mailer.close();
      await catcher.close();
    }
  });
});
