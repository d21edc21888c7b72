import { createLogger } from "@app/http-kit";
import request from "supertest";
import { afterEach, describe, expect, it } from "vitest";
import { runHousekeeping, startHousekeeping } from "../src/housekeeping.js";
import { INVITATION_RETENTION_MS } from "../src/organizations/deletion.js";
import { frozenClock, identityKit, type Kit, sessionCookie, signUp } from "./kit.js";

const open: Kit[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((k) => k.close()));
});

async function kit(env: Record<string, string> = {}, now?: () => number) {
  const k = await identityKit({ env, ...(now ? { now } : {}) });
  open.push(k);
  return k;
}

const DAY = 24 * 3600 * 1000;
const silent = createLogger({ name: "t", level: "silent" });

describe("expired sessions are purged", () => {
  it("purgeExpired deletes exactly the expired rows", async () => {
    const clock = frozenClock();
    const k = await kit({ SESSION_TTL_DAYS: "7" }, clock.now);
    const early = await signUp(k.app);
    clock.advance(2 * DAY);
    const late = await signUp(k.app);
    clock.advance(5 * DAY); // early's session expires exactly now; late's in 2 days
    expect(await k.service.sessions.purgeExpired()).toBe(1);
    const left = await k.db.prisma.session.findMany();
    expect(left.map((s) => s.userId)).toEqual([late.user.id]);
    expect(await k.service.sessions.purgeExpired()).toBe(0);
    clock.advance(2 * DAY);
    expect(await k.service.sessions.purgeExpired()).toBe(1);
    expect(await k.db.prisma.session.count()).toBe(0);
    expect(early.user.id).not.toBe(late.user.id);
  });

  it("a housekeeping round purges sessions and retires keys, and survives a failing database", async () => {
    const clock = frozenClock();
    const k = await kit({ SESSION_TTL_DAYS: "1" }, clock.now);
    const { user } = await signUp(k.app);
    // One expired and one live challenge: only the expired one goes.
    for (const [id, expiresAt] of [
      ["expired", new Date(clock.now() + DAY - 1)],
      ["live", new Date(clock.now() + 2 * DAY)],
    ] as const) {
      await k.db.prisma.authChallenge.create({
        data: { id: `${id}-${user.id}`, purpose: "test", subject: user.id, secretHash: new Uint8Array(32), expiresAt },
      });
    }
    clock.advance(DAY);
    expect(await runHousekeeping(k.service, { logger: silent, keyRotationMs: 0 })).toEqual({
      purgedSessions: 1,
      purgedOAuth: 0,
      purgedChallenges: 1,
      retiredKeys: 0,
      rotatedKid: undefined,
      purgedTokens: 0,
      completedDeletions: 0,
      purgedMails: 0,
      completedOrganizationDeletions: 0,
      purgedInvitations: 0,
      purgedEvents: 0,
    });
    const failing = {
      sessions: { purgeExpired: () => Promise.reject(new Error("connect ECONNREFUSED")) },
      keys: { rotateIfDue: () => Promise.reject(new Error("down")), retireExpired: () => Promise.reject(new Error("down")) },
    } as unknown as Parameters<typeof runHousekeeping>[0];
    await expect(runHousekeeping(failing, { logger: silent, keyRotationMs: DAY })).resolves.toEqual({
      purgedSessions: 0,
      purgedOAuth: 0,
      purgedChallenges: 0,
      retiredKeys: 0,
      rotatedKid: undefined,
      purgedTokens: 0,
      completedDeletions: 0,
      purgedMails: 0,
      completedOrganizationDeletions: 0,
      purgedInvitations: 0,
      purgedEvents: 0,
    });
  });

  it("finishes organization deletions the API is done with and purges invitations a month past their expiry", async () => {
    const clock = frozenClock();
    const k = await kit({}, clock.now);
    const { user } = await signUp(k.app);
    const prisma = k.db.prisma;
    const org = (id: string) => prisma.organization.create({ data: { id, name: id, slug: `${id}-${user.id}` } });
    await org("done");
    await org("waiting");
    await prisma.organizationDeletion.createMany({
      data: [
        { organizationId: "done", apiDoneAt: new Date(clock.now()) },
        { organizationId: "waiting", apiDoneAt: null },
      ],
    });
    const invitation = (id: string, expiresAt: Date) =>
      prisma.invitation.create({
        data: {
          id,
          organizationId: "waiting",
          email: `${id}@example.com`,
          role: "member",
          status: "accepted",
          expiresAt,
          inviterId: user.id,
        },
      });
    await invitation("old", new Date(clock.now() - INVITATION_RETENTION_MS));
    await invitation("recent", new Date(clock.now() - INVITATION_RETENTION_MS + 1));
    const round = await runHousekeeping(k.service, { logger: silent, keyRotationMs: 0, organizations: k.organizations });
    expect([round.completedOrganizationDeletions, round.purgedInvitations]).toEqual([1, 1]);
    expect((await prisma.organization.findMany({ select: { id: true } })).map((o) => o.id)).toEqual(["waiting"]);
    expect((await prisma.invitation.findMany({ select: { id: true } })).map((i) => i.id)).toEqual(["recent"]);
    expect((await prisma.organizationDeletion.findUniqueOrThrow({ where: { organizationId: "done" } })).completedAt).toEqual(
      new Date(clock.now()),
    );
    const again = await runHousekeeping(k.service, { logger: silent, keyRotationMs: 0, organizations: k.organizations });
    expect([again.completedOrganizationDeletions, again.purgedInvitations]).toEqual([0, 0]);
  });

  it("rotates on the interval when KEY_ROTATION_DAYS is set", async () => {
    const clock = frozenClock();
    const k = await kit({}, clock.now);
    await k.service.keys.view();
    clock.advance(30 * DAY);
    const round = await runHousekeeping(k.service, { logger: silent, keyRotationMs: 30 * DAY });
    expect(round.rotatedKid).toEqual(expect.any(String));
    expect((await request(k.app).get("/api/auth/jwks")).body.keys).toHaveLength(2);
  });
});

describe("a sign-in flood does not grow the session table without bound", () => {
  it("the scheduled housekeeping purges a flood's sessions once they expire", async () => {
    const clock = frozenClock(Date.now());
    const k = await kit({ SESSION_TTL_DAYS: "1" }, clock.now);
    const { body } = await signUp(k.app);
    for (let i = 0; i < 30; i += 1) {
      await request(k.app).post("/api/auth/sign-in/email").send({ email: body.email, password: body.password }).expect(200);
    }
    expect(await k.db.prisma.session.count()).toBe(31);
    clock.advance(DAY);
    const stop = startHousekeeping(k.service, { logger: silent, keyRotationMs: 0, intervalMs: 50 });
    try {
      for (let i = 0; i < 100 && (await k.db.prisma.session.count()) > 0; i += 1) await new Promise((r) => setTimeout(r, 50));
      expect(await k.db.prisma.session.count()).toBe(0);
    } finally {
      stop();
    }
  });

  it("keeps at most MAX_SESSIONS_PER_USER sessions per user: the oldest go first", async () => {
    const k = await kit({ MAX_SESSIONS_PER_USER: "3" });
    const { body, user, cookie: first } = await signUp(k.app);
    const cookies: string[] = [first];
    for (let i = 0; i < 40; i += 1) {
      const res = await request(k.app).post("/api/auth/sign-in/email").send({ email: body.email, password: body.password }).expect(200);
      cookies.push(sessionCookie(res) ?? "");
    }
    expect(await k.db.prisma.session.count({ where: { userId: user.id } })).toBe(3);
    for (const cookie of cookies.slice(-3)) await request(k.app).post("/api/auth/get-session").set("cookie", cookie).expect(200);
    await request(k.app)
      .post("/api/auth/get-session")
      .set("cookie", cookies[0] ?? "")
      .expect(401);
    const other = await signUp(k.app);
    expect(await k.db.prisma.session.count({ where: { userId: other.user.id } })).toBe(1);
  });
});

describe("security headers", () => {
  it("every identity response carries helmet's headers with a deny-all CSP", async () => {
    const k = await kit();
    for (const res of [
      await request(k.app).get("/api/auth/jwks"),
      await request(k.app).post("/api/auth/sign-in/email").send({}),
      await request(k.app).get("/healthz"),
      await request(k.app).get("/nope"),
    ]) {
      expect(res.headers["content-security-policy"]).toContain("default-src 'none'");
      expect(res.headers["content-security-policy"]).toContain("frame-ancestors 'none'");
      expect(res.headers["x-content-type-options"]).toBe("nosniff");
      expect(res.headers["x-frame-options"]).toBe("DENY");
      expect(res.headers["referrer-policy"]).toBe("no-referrer");
      expect(res.headers["strict-transport-security"]).toMatch(/max-age=\d+/);
      expect(res.headers["cross-origin-resource-policy"]).toBe("same-site");
      expect(res.headers["x-powered-by"]).toBeUndefined();
    }
  });
});
