import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RolesService } from "../src/admin/roles.js";
import { startTestApi, type TestApi } from "./helpers.js";

const run = promisify(execFile);
const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../dist/cli/grant-admin.js");

let t: TestApi;
beforeAll(async () => {
  t = await startTestApi();
});
afterAll(async () => {
  await t?.close();
});

describe("admin routes and the roles middleware", () => {
  it("answers 403 to a non-admin after exactly one user_role read, 401 without a token", async () => {
    const u = await t.user();
    await fetch(`${t.url}/api/me`, { headers: u.auth }); // warm the key set
    const before = t.db.queryCount();
    const res = await fetch(`${t.url}/api/admin/users`, { headers: u.auth });
    expect(res.status).toBe(403);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("forbidden");
    expect(t.db.queryCount() - before).toBe(1);
    expect((await fetch(`${t.url}/api/admin/users`)).status).toBe(401);
  });

  it("never takes roles from the JWT", async () => {
    const u = await t.user();
    // A validly signed token claiming admin (roles, tier) gets nothing: only user_role decides.
    const forged = await t.stub.mint(u, { extra: { roles: ["admin"], role: "admin", tier: "enterprise" } });
    const res = await fetch(`${t.url}/api/admin/users`, { headers: { authorization: `Bearer ${forged}` } });
    expect(res.status).toBe(403);
  });

  it("lets an admin list users with roles (one role read plus the list) and set roles", async () => {
    const admin = await t.user({ email: "boss@example.com" });
    const target = await t.user({ email: "worker@example.com" });
    await t.db.prisma.userRole.create({ data: { userId: admin.id, role: "admin" } });
    const roles = new RolesService(t.db.prisma);
    const listOnly = t.db.queryCount();
    await roles.listUsers({ limit: 100 });
    const listQueries = t.db.queryCount() - listOnly;

    const before = t.db.queryCount();
    const res = await fetch(`${t.url}/api/admin/users?limit=100`, { headers: admin.auth });
    expect(res.status).toBe(200);
    expect(t.db.queryCount() - before).toBe(listQueries + 1); // + exactly one user_role read
    const users = ((await res.json()) as { data: Array<{ email: string; roles: string[] }> }).data;
    expect(users.find((x) => x.email === "boss@example.com")?.roles).toEqual(["admin"]);
    expect(users.find((x) => x.email === "worker@example.com")?.roles).toEqual([]);

    const set = await fetch(`${t.url}/api/admin/users/${target.id}/roles`, {
      method: "PUT",
      headers: { ...admin.auth, "content-type": "application/json" },
      body: JSON.stringify({ roles: ["support", "admin", "support"] }),
    });
    expect(set.status).toBe(200);
    expect(((await set.json()) as { data: unknown }).data).toEqual({ id: target.id, roles: ["admin", "support"] });
    // The target is admin now, with the very same token as before: roles come from the database.
    expect((await fetch(`${t.url}/api/admin/users`, { headers: target.auth })).status).toBe(200);

    const put = (id: string, roles: string[]) =>
      fetch(`${t.url}/api/admin/users/${id}/roles`, {
        method: "PUT",
        headers: { ...admin.auth, "content-type": "application/json" },
        body: JSON.stringify({ roles }),
      });
    expect((await put("no-such-user", ["admin"])).status).toBe(404);
    expect((await put(target.id, ["Not A Role"])).status).toBe(400);
    expect((await put(target.id, [])).status).toBe(200);
    const last = await put(admin.id, []);
    expect(last.status).toBe(409); // would leave no admin
    expect(await t.db.prisma.userRole.count({ where: { userId: admin.id, role: "admin" } })).toBe(1);
  });
});

describe("the database boundary", () => {
  it("refuses the API's own connection identity's tables; the admin listing reads the projection", async () => {
    for (const table of ["user", "session", "account", "jwks"]) {
      await expect(t.db.pool.query(`SELECT * FROM "${table}" LIMIT 1`), table).rejects.toMatchObject({ code: "42501" });
    }
    const admin = await t.user({ email: "directory-admin@example.com", name: "Dee" });
    await t.db.prisma.userRole.create({ data: { userId: admin.id, role: "admin" } });
    const res = await fetch(`${t.url}/api/admin/users?limit=100`, { headers: admin.auth });
    expect(res.status).toBe(200);
    const listed = ((await res.json()) as { data: Array<Record<string, unknown>> }).data.find((x) => x.id === admin.id);
    expect(listed).toEqual({
      id: admin.id,
      email: "directory-admin@example.com",
      name: "Dee",
      createdAt: expect.any(String),
      roles: ["admin"],
    });
  });
});

describe("grant-admin CLI", () => {
  it("grants admin by (case-insensitive) email, and fails for an unknown email", async () => {
    if (!existsSync(CLI)) throw new Error("apps/api is not built: run the build first");
    const u = await t.user({ email: "first-admin@example.com" });
    const env = { ...process.env, DATABASE_URL: t.config.databaseUrl };
    const { stdout } = await run(process.execPath, [CLI, "First-Admin@Example.COM"], { env });
    expect(stdout).toContain("granted admin");
    expect(await t.db.prisma.userRole.count({ where: { userId: u.id, role: "admin" } })).toBe(1);
    await run(process.execPath, [CLI, "first-admin@example.com"], { env }); // idempotent
    await expect(run(process.execPath, [CLI, "nobody@example.com"], { env })).rejects.toMatchObject({ code: 1 });
    await expect(run(process.execPath, [CLI], { env })).rejects.toMatchObject({ code: 2 });
  });
});
