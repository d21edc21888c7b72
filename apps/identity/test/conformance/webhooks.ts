import { expect } from "vitest";
import { testConfig } from "../../src/config.js";
import { Dispatcher } from "../../src/webhooks/dispatcher.js";
import { enqueueWebhook } from "../../src/webhooks/outbox.js";
import { AttemptQueue } from "../../src/webhooks/queue.js";
import { ORIGIN, SECRET } from "../kit.js";
import type { ConformanceContext } from "./context.js";
import { databaseHolding } from "./database.js";

/**
 * Answers every route of the feature (route-conformance.test.ts): an admin registers an
 * endpoint, lists it, reads its delivery log (one event fanned out by the dispatcher), retries
 * that delivery and deletes the endpoint.
 */
export async function drive(ctx: ConformanceContext): Promise<void> {
  const { expectJson, password } = ctx;
  const admin = ctx.client();
  const signedUp = await expectJson(await admin.post("/api/auth/sign-up/email", { email: ctx.fresh("hooks"), password, name: "Hooks" }));
  const db = await databaseHolding((signedUp.user as { id: string }).id);
  try {
    await db.pool.query(`INSERT INTO user_role (user_id, role) VALUES ($1, 'admin') ON CONFLICT DO NOTHING`, [
      (signedUp.user as { id: string }).id,
    ]);
    const base = "/api/auth/admin/webhooks";
    const created = await expectJson(await admin.post(base, { url: "https://hooks.example.com/identity", events: ["user.updated"] }), 201);
    expect(created.secret).toMatch(/^whsec_/);
    const id = created.id as string;
    expect(((await expectJson(await admin.get(base))).endpoints as { id: string }[]).map((e) => e.id)).toContain(id);

    await enqueueWebhook(db.prisma, "user.updated", { id: "conformance" });
    // The delivery worker does not run here: one dispatch round fans the event out, as it would.
    const { webhooks: settings } = testConfig({ DATABASE_URL: "postgresql://unused/x", AUTH_SECRET: SECRET });
    const dispatcher = new Dispatcher({ prisma: db.prisma, queue: new AttemptQueue(settings), settings });
    await dispatcher.dispatch();
    const log = await expectJson(await admin.get(`${base}/${id}/deliveries?limit=10`));
    const [delivery] = log.deliveries as { id: string; state: string }[];
    expect(delivery?.state).toBe("pending");
    await expectJson(await admin.post(`${base}/${id}/deliveries/${delivery?.id}/retry`));
    const removed = await admin.browser.request(new URL(`${base}/${id}`, ctx.baseUrl), {
      method: "DELETE",
      headers: { accept: "application/json", origin: ORIGIN },
    });
    expect(await expectJson(removed)).toEqual({ success: true });
  } finally {
    await db.close();
  }
}
