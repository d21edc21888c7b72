import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApi, type TestApi } from "./helpers.js";

// A database that is reachable but dropped or emptied answers like one that is down: 503
// service_unavailable on every data route, never 500 internal_error; authentication needs no
// database and keeps working.
let t: TestApi;
beforeAll(async () => {
  t = await startTestApi();
});
afterAll(async () => {
  await t?.close();
});

/** The server's superuser on the test database the API uses (the API's role may not drop tables). */
function adminUrl(database?: string): string {
  const url = new URL(process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL ?? "");
  if (database) url.pathname = `/${database}`;
  return url.toString();
}

async function admin(url: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

async function expectUnavailable(res: Response) {
  const body = (await res.json()) as { error?: { code?: string } };
  expect(res.status, JSON.stringify(body)).toBe(503);
  expect(body.error?.code).toBe("service_unavailable");
}

describe("the API with its tables or database gone", () => {
  it("answers 503 service_unavailable when a table is dropped, then when the database is dropped", async () => {
    const u = await t.user();
    const json = (body: unknown) => ({
      method: "POST",
      headers: { ...u.auth, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    expect((await fetch(`${t.url}/api/tasks`, json({ title: "before" }))).status).toBe(201);
    const database = new URL(t.config.databaseUrl).pathname.slice(1);

    await admin(adminUrl(database), 'DROP TABLE "task" CASCADE');
    await expectUnavailable(await fetch(`${t.url}/api/tasks`, { headers: u.auth }));
    await expectUnavailable(await fetch(`${t.url}/api/tasks`, json({ title: "after" })));

    await admin(adminUrl(), `DROP DATABASE "${database}" WITH (FORCE)`);
    for (let i = 0; i < 2; i += 1) {
      await expectUnavailable(await fetch(`${t.url}/api/tasks`, { headers: u.auth }));
      await expectUnavailable(await fetch(`${t.url}/api/projects`, { headers: u.auth }));
      await expectUnavailable(await fetch(`${t.url}/api/projects`, json({ name: "p" })));
    }
    expect((await fetch(`${t.url}/api/me`, { headers: u.auth })).status).toBe(200);
    expect(t.logs.join("")).not.toContain('"code":"internal_error"');
  });
});
