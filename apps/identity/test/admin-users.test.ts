import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_LIMITS } from "../src/admin/limits.js";
import { type AdminBrowser, type AdminStack, adminStack, expectStatus, freshEmail, PASSWORD, signUp } from "./admin-kit.js";
import { refusals } from "./metrics-kit.js";

// The admin routes on better-auth's admin wire against the real app (PostgreSQL, roles read
// from role_directory): who may call them, and what each does.
let stack: AdminStack;
let admin: AdminBrowser;
let adminUser: { id: string; email: string };

beforeAll(async () => {
  stack = await adminStack();
  admin = stack.browser();
  adminUser = await signUp(admin, freshEmail("admin"));
  await stack.grantAdmin(adminUser.id);
});
afterAll(async () => {
  await stack?.close();
});

const ROUTES: Array<["GET" | "POST", string, unknown]> = [
  ["GET", "list-users", undefined],
  ["GET", "get-user?id=x", undefined],
  ["POST", "create-user", { email: "x@example.com", name: "X" }],
  ["POST", "update-user", { userId: "x", data: { name: "X" } }],
  ["POST", "set-role", { userId: "x", role: "admin" }],
  ["POST", "set-user-password", { userId: "x", newPassword: "long enough password" }],
  ["POST", "remove-user", { userId: "x" }],
  ["POST", "ban-user", { userId: "x" }],
  ["POST", "unban-user", { userId: "x" }],
  ["POST", "list-user-sessions", { userId: "x" }],
  ["POST", "revoke-user-session", { sessionToken: "x" }],
  ["POST", "revoke-user-sessions", { userId: "x" }],
  ["POST", "impersonate-user", { userId: "x" }],
];

/** A signed-up user's browser. */
async function someone(label = "user") {
  const browser = stack.browser();
  return { browser, user: await signUp(browser, freshEmail(label)) };
}

const adminPost = (route: string, body: unknown) => admin.post(`/api/auth/admin/${route}`, body);

describe("who may manage users", () => {
  it("answers 401 without a session and 403 forbidden to a user without the admin role, on every admin route", async () => {
    const anonymous = stack.browser();
    const { browser } = await someone();
    for (const [method, route, body] of ROUTES) {
      expect((await anonymous.send(method, `/api/auth/admin/${route}`, body)).status, route).toBe(401);
      const refused = await browser.send(method, `/api/auth/admin/${route}`, body);
      expect([refused.status, refused.body?.code], route).toEqual([403, "forbidden"]);
    }
  });

  it("reads the role on every request: granted, it works at once; taken, it stops at once", async () => {
    const { browser, user } = await someone("promoted");
    expect((await browser.get("/api/auth/admin/list-users")).status).toBe(403);
    const granted = expectStatus(await adminPost("set-role", { userId: user.id, role: "admin" }), 200);
    expect((granted.user as { role: string }).role).toBe("admin");
    expectStatus(await browser.get("/api/auth/admin/list-users"), 200);
    expectStatus(await adminPost("set-role", { userId: user.id, role: ["user"] }), 200);
    expect((await browser.get("/api/auth/admin/list-users")).status).toBe(403);
  });

  it("never takes the admin role from the last admin (409), and refuses an unknown role (400)", async () => {
    const { user } = await someone("other-admin");
    await stack.grantAdmin(user.id);
    // Two admins: one may step down; then the other is the last one.
    expectStatus(await adminPost("set-role", { userId: user.id, role: "user" }), 200);
    const last = await stack.kit.db.prisma.roleDirectory.findMany({ where: { role: "admin" } });
    expect(last.map((r) => r.userId)).toEqual([adminUser.id]);
    expect(expectStatus(await adminPost("set-role", { userId: adminUser.id, role: "user" }), 409).code).toBe("conflict");
    expect(expectStatus(await adminPost("set-role", { userId: user.id, role: "owner" }), 400).code).toBe("validation_failed");
    expect(expectStatus(await adminPost("set-role", { userId: "no-such-user", role: "admin" }), 404).code).toBe("not_found");
  });

  it("answers has-permission from the caller's role with better-auth's admin statements", async () => {
    const ask = (browser: AdminBrowser, permissions: Record<string, string[]>) =>
      browser.post("/api/auth/admin/has-permission", { permissions });
    expect((await ask(admin, { user: ["list", "ban"], session: ["revoke"] })).body).toEqual({ error: null, success: true });
    expect((await ask(admin, { user: ["impersonate-admins"] })).body).toEqual({ error: null, success: false });
    const { browser } = await someone();
    expect((await ask(browser, { user: ["list"] })).body).toEqual({ error: null, success: false });
    expect((await stack.browser().post("/api/auth/admin/has-permission", { permissions: {} })).status).toBe(401);
  });
});

describe("users", () => {
  it("lists with search, role filter, sort and a page capped at 100, with the total", async () => {
    const tag = `list${Date.now()}`;
    const made = [];
    for (const name of ["Carol", "Alice", "Bob"]) {
      made.push(expectStatus(await adminPost("create-user", { email: `${name.toLowerCase()}-${tag}@example.com`, name }), 200));
    }
    const page = expectStatus(await admin.get(`/api/auth/admin/list-users?searchValue=${tag}&sortBy=name&sortDirection=asc&limit=2`), 200);
    expect(page.total).toBe(3);
    expect(page.limit).toBe(2);
    expect((page.users as { name: string }[]).map((u) => u.name)).toEqual(["Alice", "Bob"]);
    const next = expectStatus(await admin.get(`/api/auth/admin/list-users?searchValue=${tag}&sortBy=name&limit=2&offset=2`), 200);
    expect([(next.users as { name: string }[]).map((u) => u.name), next.offset]).toEqual([["Carol"], 2]);

    const capped = expectStatus(await admin.get("/api/auth/admin/list-users?limit=5000"), 200);
    expect(capped.limit).toBe(100);
    const byName = expectStatus(
      await admin.get(`/api/auth/admin/list-users?searchField=name&searchOperator=starts_with&searchValue=ALI`),
      200,
    );
    expect((byName.users as { email: string }[]).map((u) => u.email)).toContain(`alice-${tag}@example.com`);
    // LIKE's wildcards are literal characters in a search.
    for (const wildcard of ["%25", "_", "%5C"]) {
      expect(expectStatus(await admin.get(`/api/auth/admin/list-users?searchValue=${wildcard}`), 200).total, wildcard).toBe(0);
    }

    const admins = expectStatus(await admin.get("/api/auth/admin/list-users?filterField=role&filterValue=admin"), 200);
    expect((admins.users as { id: string; role: string }[]).map((u) => [u.id, u.role])).toEqual([[adminUser.id, "admin"]]);
    const nonAdmins = expectStatus(await admin.get("/api/auth/admin/list-users?filterField=role&filterOperator=ne&filterValue=admin"), 200);
    expect((nonAdmins.users as { role: string }[]).every((u) => u.role === "user")).toBe(true);
    const ids = made.map((m) => (m.user as { id: string }).id);
    const some = expectStatus(
      await admin.get(`/api/auth/admin/list-users?filterField=id&filterOperator=in&filterValue=${ids[0]}&filterValue=${ids[1]}`),
      200,
    );
    expect(some.total).toBe(2);

    for (const bad of [
      "limit=0",
      "offset=-1",
      "sortBy=password",
      "filterField=password&filterValue=x",
      "filterField=role&filterValue=owner",
      "filterField=banned&filterOperator=contains&filterValue=t",
    ]) {
      expect(expectStatus(await admin.get(`/api/auth/admin/list-users?${bad}`), 400).code, bad).toBe("validation_failed");
    }
  });

  it("creates users (with a password, as admin, without a password) and refuses a taken address", async () => {
    const email = freshEmail("created");
    const created = expectStatus(
      await adminPost("create-user", { email, password: PASSWORD, name: "Made", role: "admin", data: { emailVerified: true } }),
      200,
    );
    expect(created.user).toMatchObject({
      email,
      name: "Made",
      role: "admin",
      emailVerified: true,
      banned: false,
      banReason: null,
      banExpires: null,
    });
    const signedIn = stack.browser();
    expectStatus(await signedIn.post("/api/auth/sign-in/email", { email, password: PASSWORD }), 200);
    expectStatus(await signedIn.get("/api/auth/admin/list-users?limit=1"), 200);

    const passwordless = expectStatus(await adminPost("create-user", { email: freshEmail("nopass"), name: "No Password" }), 200);
    expect((passwordless.user as { role: string }).role).toBe("user");
    expect(await stack.kit.db.prisma.account.count({ where: { userId: (passwordless.user as { id: string }).id } })).toBe(0);
    expect(expectStatus(await adminPost("create-user", { email, name: "Again" }), 409).code).toBe("email_taken");
    expect(expectStatus(await adminPost("create-user", { email: "not an address", name: "X" }), 400).code).toBe("validation_failed");
  });

  it("gets and updates a user: profile, address (password sign-in follows), verification; refuses the password and unknown fields", async () => {
    const { user } = await someone("changed");
    const got = expectStatus(await admin.get(`/api/auth/admin/get-user?id=${user.id}`), 200);
    expect(got).toMatchObject({ id: user.id, email: user.email, role: "user", banned: false });
    expect(expectStatus(await admin.get("/api/auth/admin/get-user?id=nobody"), 404).code).toBe("not_found");

    const email = freshEmail("moved");
    const updated = expectStatus(
      await adminPost("update-user", { userId: user.id, data: { name: "Renamed", email, emailVerified: true } }),
      200,
    );
    expect(updated).toMatchObject({ id: user.id, name: "Renamed", email, emailVerified: true, role: "user" });
    expectStatus(await stack.browser().post("/api/auth/sign-in/email", { email, password: PASSWORD }), 200);

    expect(expectStatus(await adminPost("update-user", { userId: user.id, data: { email: adminUser.email } }), 409).code).toBe(
      "email_taken",
    );
    for (const data of [{}, { password: "new password here" }, { id: "x" }]) {
      expect(expectStatus(await adminPost("update-user", { userId: user.id, data }), 400).code).toBe("validation_failed");
    }
  });

  it("sets a password (creating one for a user without), which signs in", async () => {
    const created = expectStatus(await adminPost("create-user", { email: freshEmail("setpass"), name: "Set" }), 200);
    const { id, email } = created.user as { id: string; email: string };
    expect(expectStatus(await adminPost("set-user-password", { userId: id, newPassword: "a brand new password" }), 200)).toEqual({
      status: true,
    });
    expectStatus(await stack.browser().post("/api/auth/sign-in/email", { email, password: "a brand new password" }), 200);
    expect(expectStatus(await adminPost("set-user-password", { userId: id, newPassword: "short" }), 400).code).toBe("validation_failed");
  });

  it("lists a user's sessions without secrets and ends one or all of them", async () => {
    const { browser, user } = await someone("sessions");
    const second = stack.browser();
    expectStatus(await second.post("/api/auth/sign-in/email", { email: user.email, password: PASSWORD }), 200);
    const listed = expectStatus(await adminPost("list-user-sessions", { userId: user.id }), 200);
    const sessions = listed.sessions as { id: string; token: string; impersonatedBy: string | null }[];
    expect(sessions).toHaveLength(2);
    for (const s of sessions) expect([s.token, s.impersonatedBy]).toEqual([s.id, null]);
    const cookieId = browser.cookie("identity.session_token")?.split(".")[0];
    expect(JSON.stringify(listed)).not.toContain(browser.cookie("identity.session_token")?.split(".")[1]);

    expectStatus(await adminPost("revoke-user-session", { sessionToken: cookieId }), 200);
    expect((await browser.session()).userId).toBeNull();
    expect((await second.session()).userId).toBe(user.id);
    expect(expectStatus(await adminPost("revoke-user-sessions", { userId: user.id }), 200)).toEqual({ success: true });
    expect((await second.session()).userId).toBeNull();
  });

  it("removes a user (never oneself): gone from listings, every way in ended, the deletion handed to the API", async () => {
    const { browser, user } = await someone("removed");
    expect(expectStatus(await adminPost("remove-user", { userId: adminUser.id }), 400).code).toBe("bad_request");
    expect(expectStatus(await adminPost("remove-user", { userId: user.id }), 200)).toEqual({ success: true });
    expect((await browser.session()).userId).toBeNull();
    expect(expectStatus(await admin.get(`/api/auth/admin/get-user?id=${user.id}`), 404).code).toBe("not_found");
    const listed = expectStatus(await admin.get(`/api/auth/admin/list-users?filterField=id&filterValue=${user.id}`), 200);
    expect(listed.total).toBe(0);
    expect((await stack.browser().post("/api/auth/sign-in/email", { email: user.email, password: PASSWORD })).status).toBe(401);
    expect(await stack.kit.db.prisma.userDeletion.count({ where: { userId: user.id } })).toBe(1);
    expect(expectStatus(await adminPost("remove-user", { userId: user.id }), 404).code).toBe("not_found");
  });

  it("limits the costly actions per admin: the next create-user in the window answers 429 with Retry-After", async () => {
    const { user } = await someone("limited-admin");
    await stack.grantAdmin(user.id);
    const limited = stack.browser();
    expectStatus(await limited.post("/api/auth/sign-in/email", { email: user.email, password: PASSWORD }), 200);
    for (let i = 0; i < ADMIN_LIMITS.sensitivePerAdmin; i++) {
      expectStatus(await limited.post("/api/auth/admin/create-user", { email: freshEmail("bulk"), name: "Bulk" }), 200);
    }
    const before = await refusals("admin-sensitive");
    expect(before, "the series exists at 0 from the start").toBeGreaterThanOrEqual(0);
    const refused = await limited.post("/api/auth/admin/create-user", { email: freshEmail("bulk"), name: "Bulk" });
    expect([refused.status, refused.body?.code]).toEqual([429, "rate_limited"]);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await refusals("admin-sensitive")).toBe((before ?? 0) + 1);
    // Another admin is counted on its own.
    expectStatus(await adminPost("create-user", { email: freshEmail("other"), name: "Other" }), 200);
  });
});
