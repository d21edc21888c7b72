import { randomBytes } from "node:crypto";
import { SET_AUTH_JWT_HEADER } from "@app/contracts";
import { createTestDatabase, type TestDatabase } from "@app/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchStack, type RunningStack } from "./launch.js";

let database: TestDatabase;
let stack: RunningStack;
const lines: string[] = [];
const AUTH_SECRET = randomBytes(32).toString("base64url");

beforeAll(async () => {
  database = await createTestDatabase();
  stack = await launchStack({
    databaseUrl: database.url,
    port: 0,
    authSecret: AUTH_SECRET,
    dataEncryptionKey: randomBytes(32).toString("base64url"),
    env: { LOG_LEVEL: "info", UPLOAD_DIR: `/tmp/stack-test-uploads-${process.pid}` },
    onLine: (name, line) => lines.push(`${name} ${line}`),
  });
});
afterAll(async () => {
  await stack?.stop();
  await database?.drop();
});

async function signUpAndIn() {
  const email = `e2e-${randomBytes(4).toString("hex")}@example.com`;
  const password = "correct horse battery";
  const up = await fetch(`${stack.baseUrl}/api/auth/sign-up/email`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email, password, name: "E2E" }),
  });
  expect(up.status).toBe(200);
  const signIn = await fetch(`${stack.baseUrl}/api/auth/sign-in/email`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email, password }),
  });
  expect(signIn.status).toBe(200);
  expect(signIn.headers.get(SET_AUTH_JWT_HEADER)).toBeNull();
  const cookie = (signIn.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
  expect(cookie).toMatch(/^identity\.session_token=/);
  return { email, password, cookie };
}

async function getSession(cookie: string) {
  return fetch(`${stack.baseUrl}/api/auth/get-session`, { method: "POST", headers: { cookie } });
}

describe("the whole service on one base URL", () => {
  it("two-step login: no JWT until get-session, then bearer calls succeed", async () => {
    const { cookie } = await signUpAndIn();
    const before = await fetch(`${stack.baseUrl}/api/tasks`);
    expect(before.status).toBe(401);
    const cookieOnly = await fetch(`${stack.baseUrl}/api/tasks`, { headers: { cookie } });
    expect(cookieOnly.status).toBe(401);

    const session = await getSession(cookie);
    expect(session.status).toBe(200);
    const jwt = session.headers.get(SET_AUTH_JWT_HEADER) ?? "";
    expect(jwt.split(".")).toHaveLength(3);

    const auth = { authorization: `Bearer ${jwt}` };
    const created = await fetch(`${stack.baseUrl}/api/tasks`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ title: "from e2e" }),
    });
    expect(created.status).toBe(201);
    const task = ((await created.json()) as { ok: boolean; data: { id: string; title: string } }).data;
    expect(task.title).toBe("from e2e");
    const list = await fetch(`${stack.baseUrl}/api/tasks`, { headers: auth });
    expect(list.status).toBe(200);
    const body = (await list.json()) as { ok: boolean; data: { id: string }[] };
    expect(body.ok).toBe(true);
    expect(body.data.map((t) => t.id)).toContain(task.id);
  });

  it("serves the JWKS publicly and keeps an issued JWT valid after sign-out", async () => {
    const jwks = await fetch(`${stack.baseUrl}/api/auth/jwks`);
    expect(jwks.status).toBe(200);
    const keys = ((await jwks.json()) as { keys: { kid: string }[] }).keys;
    expect(keys.length).toBeGreaterThanOrEqual(1);

    const { cookie } = await signUpAndIn();
    const jwt = (await getSession(cookie)).headers.get(SET_AUTH_JWT_HEADER) ?? "";
    const out = await fetch(`${stack.baseUrl}/api/auth/sign-out`, { method: "POST", headers: { cookie } });
    expect(out.status).toBe(200);
    expect((await getSession(cookie)).status).toBe(401);
    const me = await fetch(`${stack.baseUrl}/api/me`, { headers: { authorization: `Bearer ${jwt}` } });
    expect(me.status).toBe(200);
  });

  it("keeps secrets out of every log line of the run", async () => {
    const { cookie, password } = await signUpAndIn();
    const jwt = (await getSession(cookie)).headers.get(SET_AUTH_JWT_HEADER) ?? "";
    await fetch(`${stack.baseUrl}/api/me`, { headers: { authorization: `Bearer ${jwt}` } });
    const text = lines.join("\n");
    expect(text).toContain("request completed");
    for (const secret of [password, cookie.split("=")[1] ?? "", jwt, AUTH_SECRET]) expect(text).not.toContain(secret);
  });
});
