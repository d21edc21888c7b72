import { createDb } from "@app/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { identityKit } from "./kit.js";
import { seriesValue } from "./metrics-kit.js";
import { eventsOf, send } from "./security-events-kit.js";

// identity_sign_ins_total counts what the security event log holds: a sign-in once its session,
// event and webhook committed, a refused one once its event is written; a sign-in whose
// transaction rolls back is in neither.

const PASSWORD = "correct horse battery";
let kit: Awaited<ReturnType<typeof identityKit>>;

beforeAll(async () => {
  kit = await identityKit();
});
afterAll(async () => {
  await kit?.close();
});

const signIns = async (outcome: "success" | "failure") =>
  (await seriesValue("identity_sign_ins_total", { method: "password", outcome })) ?? 0;
const signIn = (email: string, password = PASSWORD) => send(kit.app, "post", "/api/auth/sign-in/email", { email, password });

async function account(): Promise<{ id: string; email: string }> {
  const email = `metrics-${Date.now()}-${Math.random().toString(36).slice(2)}@example.com`;
  const res = await send(kit.app, "post", "/api/auth/sign-up/email", { email, password: PASSWORD, name: "Metrics" });
  expect(res.status, res.text).toBe(200);
  return { id: (res.body.user as { id: string }).id, email };
}

describe("identity_sign_ins_total", () => {
  it("counts a sign-in once it committed, and not one whose transaction rolled back", async () => {
    const { id, email } = await account();
    const admin = createDb(kit.database.url, { max: 1 });
    const before = await signIns("success");
    try {
      // The outbox refuses session.created, after the sign_in event is written in the same
      // transaction: the whole sign-in rolls back.
      await admin.prisma.$executeRawUnsafe(`CREATE FUNCTION metrics_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN IF NEW.type = 'session.created' THEN RAISE EXCEPTION 'refused by the test'; END IF; RETURN NEW; END $$`);
      await admin.prisma.$executeRawUnsafe(
        "CREATE TRIGGER metrics_refuse BEFORE INSERT ON webhook_message FOR EACH ROW EXECUTE FUNCTION metrics_refuse()",
      );
      const res = await signIn(email);
      expect(res.status, res.text).toBe(500);
      expect(await eventsOf(kit.db.prisma, id, ["sign_in"])).toHaveLength(1); // the sign-up's own
      expect(await signIns("success")).toBe(before);
    } finally {
      await admin.prisma.$executeRawUnsafe("DROP TRIGGER IF EXISTS metrics_refuse ON webhook_message");
      await admin.prisma.$executeRawUnsafe("DROP FUNCTION IF EXISTS metrics_refuse()");
      await admin.close();
    }
    // With the outbox writable again the same sign-in commits, and counts once.
    expect((await signIn(email)).status).toBe(200);
    expect(await eventsOf(kit.db.prisma, id, ["sign_in"])).toHaveLength(2);
    expect(await signIns("success")).toBe(before + 1);
  });

  it("counts a refused sign-in (a wrong password) as a failure, with its event", async () => {
    const { id, email } = await account();
    const before = await signIns("failure");
    expect((await signIn(email, "not the password")).status).toBe(401);
    expect(await eventsOf(kit.db.prisma, id, ["sign_in_failed"])).toHaveLength(1);
    expect(await signIns("failure")).toBe(before + 1);
  });
});
