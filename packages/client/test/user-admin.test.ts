import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AppClient, createClient, memoryStorage } from "../src/index.js";
import { cookieFetch, freshEmail, grantRole, signInSignedIn, signUpSignedIn, startStack } from "./helpers.js";

// Operators' user management through the SDK against a real identity: admins hold the API's
// `admin` role (user_role, granted here as `pnpm admin:grant` does).
const PASSWORD = "correct horse battery";

/** The claims of a JWT, unverified (the API verifies; this only reads what identity put in). */
function claims(token: string | null): Record<string, unknown> {
  return JSON.parse(Buffer.from(token?.split(".")[1] ?? "", "base64url").toString("utf8")) as Record<string, unknown>;
}
let env: Awaited<ReturnType<typeof startStack>>;
beforeAll(async () => {
  env = await startStack();
});
afterAll(async () => {
  await env?.stop();
});

/** A browser of its own: cookie jar and storage. */
function browser(): { client: AppClient; jar: ReturnType<typeof cookieFetch> } {
  const jar = cookieFetch();
  return { client: createClient({ baseUrl: env.stack.baseUrl, storage: memoryStorage(), fetch: jar.fetch }), jar };
}

async function signedUp(prefix: string, name = `${prefix} person`) {
  const b = browser();
  const email = freshEmail(prefix);
  const { user } = await signUpSignedIn(b.client, { email, password: PASSWORD, name });
  return { ...b, email, id: user.id };
}

async function admin() {
  const a = await signedUp("admin");
  await grantRole(env.database.url, a.id, "admin");
  return a;
}

describe("user administration", () => {
  it("refuses anyone without the admin role; an admin searches users by email or name", async () => {
    const plain = await signedUp("plain");
    await expect(plain.client.auth.admin.listUsers()).rejects.toMatchObject({ status: 403, code: "forbidden" });
    const boss = await admin();
    const target = await signedUp("findme", "Grace Hopper");
    const byEmail = await boss.client.auth.admin.listUsers({ searchValue: target.email.slice(0, 12), searchField: "email", limit: 10 });
    expect(byEmail.users.map((u) => u.id)).toContain(target.id);
    const byName = await boss.client.auth.admin.listUsers({ searchValue: "Grace Hop", searchField: "name", searchOperator: "starts_with" });
    expect(byName.users.map((u) => u.email)).toEqual([target.email]);
    expect(byName.total).toBe(1);
    const paged = await boss.client.auth.admin.listUsers({ limit: 1, offset: 1, sortBy: "createdAt", sortDirection: "asc" });
    expect(paged.users).toHaveLength(1);
    expect(paged.total).toBeGreaterThanOrEqual(3);
    const both = await boss.client.auth.admin.listUsers({ filterField: "id", filterOperator: "in", filterValue: [target.id, boss.id] });
    expect(both.users.map((u) => u.id).sort()).toEqual([target.id, boss.id].sort());
    expect(await boss.client.auth.admin.getUser(target.id)).toMatchObject({ id: target.id, role: "user", banned: false });
    expect((await boss.client.auth.admin.getUser(boss.id)).role).toBe("admin");
  });

  it("a ban ends the user's sessions and refuses sign-in with `banned` until lifted; the reason and expiry are kept", async () => {
    const boss = await admin();
    const target = await signedUp("banned");
    const banned = await boss.client.auth.admin.banUser({ userId: target.id, banReason: "spam", banExpiresIn: 3600 });
    expect(banned).toMatchObject({ banned: true, banReason: "spam" });
    expect(Date.parse(banned.banExpires ?? "") - Date.now()).toBeGreaterThan(3500 * 1000);
    expect(await boss.client.auth.admin.listUserSessions({ userId: target.id })).toEqual([]);
    expect(await target.client.auth.checkSession()).toEqual({ status: "signed_out" });
    await expect(browser().client.auth.signIn({ email: target.email, password: PASSWORD })).rejects.toMatchObject({
      status: 403,
      code: "banned",
    });
    await expect(boss.client.auth.admin.banUser({ userId: boss.id })).rejects.toMatchObject({ status: 400 });
    expect((await boss.client.auth.admin.unbanUser({ userId: target.id })).banned).toBe(false);
    expect((await signInSignedIn(browser().client, { email: target.email, password: PASSWORD })).user.id).toBe(target.id);
  });

  it("lists a user's sessions, ends one, then all", async () => {
    const boss = await admin();
    const target = await signedUp("sessions");
    const second = browser();
    await signInSignedIn(second.client, { email: target.email, password: PASSWORD });
    const sessions = await boss.client.auth.admin.listUserSessions({ userId: target.id });
    expect(sessions).toHaveLength(2);
    const mine = (await second.client.auth.getSession())?.session.id;
    const row = sessions.find((s) => s.id === mine);
    await boss.client.auth.admin.revokeUserSession({ sessionToken: row?.token ?? "" });
    expect(await second.client.auth.checkSession()).toEqual({ status: "signed_out" });
    expect((await target.client.auth.checkSession()).status).toBe("signed_in");
    await boss.client.auth.admin.revokeUserSessions({ userId: target.id });
    expect(await target.client.auth.checkSession()).toEqual({ status: "signed_out" });
  });

  it("impersonates a user: their JWT (act.sub names the admin) and session until stopping brings the admin back", async () => {
    const boss = await admin();
    const target = await signedUp("acted");
    const signedOut: string[] = [];
    const stopWatch = boss.client.auth.watchSession({
      intervalMs: 1000,
      checkNow: false,
      events: undefined,
      onSignedOut: () => signedOut.push("out"),
    });
    try {
      const acting = await boss.client.auth.admin.impersonateUser({ userId: target.id });
      expect(acting.user.id).toBe(target.id);
      expect(acting.session.impersonatedBy).toBe(boss.id);
      expect(claims(boss.client.auth.token())).toMatchObject({ sub: target.id, act: { sub: boss.id } });
      expect((await boss.client.me()).id).toBe(target.id);
      // The client moved to the user itself: a session check keeps it signed in as them.
      expect((await boss.client.auth.checkSession()).status).toBe("signed_in");
      await expect(boss.client.auth.admin.listUsers()).rejects.toMatchObject({ status: 403 });

      const back = await boss.client.auth.admin.stopImpersonating();
      expect(back.user.id).toBe(boss.id);
      expect(back.session.impersonatedBy ?? null).toBeNull();
      expect(claims(boss.client.auth.token()).act).toBeUndefined();
      expect((await boss.client.me()).id).toBe(boss.id);
      expect((await boss.client.auth.checkSession()).status).toBe("signed_in");
      expect(signedOut).toEqual([]);
      await expect(boss.client.auth.admin.stopImpersonating()).rejects.toMatchObject({ status: 400 });
    } finally {
      stopWatch();
    }
  });

  it("makes a user an admin and back (the API's role), and deletes a user", async () => {
    const boss = await admin();
    const target = await signedUp("promoted");
    expect((await boss.client.auth.admin.setRole({ userId: target.id, role: "admin" })).role).toBe("admin");
    expect((await target.client.admin.users({ limit: 1 })).items).toHaveLength(1);
    expect((await boss.client.auth.admin.setRole({ userId: target.id, role: "user" })).role).toBe("user");
    await expect(target.client.admin.users({ limit: 1 })).rejects.toMatchObject({ status: 403 });
    await boss.client.auth.admin.removeUser({ userId: target.id });
    await expect(boss.client.auth.admin.getUser(target.id)).rejects.toMatchObject({ status: 404 });
  });
});
