import { SET_AUTH_JWT_HEADER } from "@app/contracts";
import { createTestDatabase, type TestDatabase } from "@app/db/testing";
import request from "supertest";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { identityKit, type Kit, signUp } from "./kit.js";

// Contract, authentication rule 9: changing AUTH_SECRET forces every user out. Stored session
// secrets are MACs keyed from AUTH_SECRET (src/services/sessions.ts), so a restart with another
// secret matches none of them, and a restart with the same secret matches all of them.
const FIRST = "first-secret-first-secret-first-secret-1";
const SECOND = "second-secret-second-secret-second-secr";

let database: TestDatabase;
const open: Kit[] = [];

beforeEach(async () => {
  database = await createTestDatabase();
});
afterEach(async () => {
  await Promise.all(open.splice(0).map((k) => k.close()));
  await database.drop();
});

/** One identity "process": a fresh app on the shared database, as a restart builds it. */
async function start(secret: string): Promise<Kit> {
  const k = await identityKit({ database, env: { AUTH_SECRET: secret } });
  open.push(k);
  return k;
}

describe("sessions across a restart", () => {
  it("a new AUTH_SECRET signs everyone out: the old cookie gets 401 and no JWT", async () => {
    const before = await start(FIRST);
    const { cookie } = await signUp(before.app);
    await request(before.app).post("/api/auth/get-session").set("cookie", cookie).expect(200);
    await before.close();
    open.splice(open.indexOf(before), 1);

    const after = await start(SECOND);
    const res = await request(after.app).post("/api/auth/get-session").set("cookie", cookie).expect(401);
    expect(res.body.error.code).toBe("unauthorized");
    expect(res.headers[SET_AUTH_JWT_HEADER]).toBeUndefined();
    // GET answers as better-auth's does without a session: 200 and null, no JWT.
    const get = await request(after.app).get("/api/auth/get-session").set("cookie", cookie).expect(200);
    expect(get.body).toBeNull();
    expect(get.headers[SET_AUTH_JWT_HEADER]).toBeUndefined();
  });

  it("the same AUTH_SECRET keeps every session", async () => {
    const before = await start(FIRST);
    const { cookie, user } = await signUp(before.app);
    await before.close();
    open.splice(open.indexOf(before), 1);

    const after = await start(FIRST);
    const res = await request(after.app).post("/api/auth/get-session").set("cookie", cookie).expect(200);
    expect(res.body.user.id).toBe(user.id);
    expect(res.headers[SET_AUTH_JWT_HEADER]).toEqual(expect.any(String));
  });
});
