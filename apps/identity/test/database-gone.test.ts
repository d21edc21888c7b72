import { createDb } from "@app/db";
import type { TestDatabase } from "@app/db/testing";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { identityKit, type Kit, signUp } from "./kit.js";

// A database that is reachable but dropped or emptied answers like one that is down: 503
// service_unavailable on every data route, never 500 internal_error.
let kit: Kit & { database: TestDatabase };
beforeAll(async () => {
  kit = await identityKit();
});
afterAll(async () => {
  await kit?.close();
});

async function admin(url: string, sql: string): Promise<void> {
  const db = createDb(url, { max: 1 });
  try {
    await db.pool.query(sql);
  } finally {
    await db.close();
  }
}

function expectUnavailable(res: request.Response) {
  expect(res.status, JSON.stringify(res.body)).toBe(503);
  expect(res.body).toMatchObject({ ok: false, error: { code: "service_unavailable" } });
}

describe("identity with its tables or database gone", () => {
  it("answers 503 service_unavailable when a table is dropped, then when the database is dropped", async () => {
    const { cookie, body } = await signUp(kit.app);
    const password = body.password;
    await request(kit.app).post("/api/auth/get-session").set("cookie", cookie).expect(200);

    await admin(kit.database.url, 'DROP TABLE "session" CASCADE');
    expectUnavailable(await request(kit.app).post("/api/auth/get-session").set("cookie", cookie));
    expectUnavailable(await request(kit.app).post("/api/auth/sign-in/email").send({ email: body.email, password }));

    const base = process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL ?? "";
    await admin(base, `DROP DATABASE "${new URL(kit.database.url).pathname.slice(1)}" WITH (FORCE)`);
    for (let i = 0; i < 2; i += 1) {
      expectUnavailable(await request(kit.app).post("/api/auth/get-session").set("cookie", cookie));
      expectUnavailable(await request(kit.app).post("/api/auth/sign-in/email").send({ email: body.email, password }));
      expectUnavailable(
        await request(kit.app)
          .post("/api/auth/sign-up/email")
          .send({ email: `x${i}-${body.email}`, password, name: "X" }),
      );
    }
    expect(kit.logs.join("")).not.toContain('"code":"internal_error"');
  });
});
