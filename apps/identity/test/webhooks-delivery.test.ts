import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { TestDatabase } from "@app/db/testing";
import { createLogger } from "@app/http-kit";
import request from "supertest";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { DeliveryAttempts } from "../src/webhooks/attempt.js";
import { startWebhookDelivery, type WebhookDelivery } from "../src/webhooks/delivery.js";
import { Dispatcher } from "../src/webhooks/dispatcher.js";
import { enqueueWebhook } from "../src/webhooks/outbox.js";
import { AttemptQueue } from "../src/webhooks/queue.js";
import { WebhookSecrets } from "../src/webhooks/secrets.js";
import { webhookUrlPolicy } from "../src/webhooks/send.js";
import { identityKit, type Kit, SECRET } from "./kit.js";
import { FAST_WEBHOOKS, type Receiver, registerEndpoint, signUpAdmin, startReceiver, until } from "./webhooks-kit.js";

// Deliveries from the outbox to a real receiver that verifies every request with the
// `standardwebhooks` package, through pg-boss on the test's PostgreSQL, with short retry delays.

const BASE = "/api/auth/admin/webhooks";
const logger = createLogger({ name: "webhooks-test", level: "silent" });

let kit: Kit & { database: TestDatabase };
let delivery: WebhookDelivery;
let admin: { cookie: string; id: string };
let receiver: Receiver;

beforeAll(async () => {
  kit = await identityKit({ env: { ...FAST_WEBHOOKS, WEBHOOK_RETRY_WINDOW_MS: "60000" } });
  admin = await signUpAdmin(kit.app, kit.database);
  delivery = await startWebhookDelivery({ config: kit.config, db: kit.db, logger });
});

afterEach(async () => {
  await receiver?.close();
  await kit.db.prisma.webhookEndpoint.deleteMany();
});

afterAll(async () => {
  await delivery?.stop();
  await kit?.close();
});

const deliveriesOf = (endpointId: string) =>
  kit.db.prisma.webhookDelivery.findMany({ where: { endpointId }, orderBy: { createdAt: "asc" }, include: { message: true } });

async function endpointFor(events: string[]): Promise<string> {
  receiver = await startReceiver();
  const endpoint = await registerEndpoint(kit.app, admin.cookie, receiver.url, events);
  receiver.secret = endpoint.secret;
  return endpoint.id;
}

describe("webhook delivery", () => {
  it("signs each request per Standard Webhooks: webhook-id is the message id, the body its payload", async () => {
    await endpointFor(["user.created"]);
    const id = await enqueueWebhook(kit.db.prisma, "user.created", { id: "u1", email: "ann@example.com" });
    await until(() => receiver.accepted().includes(id), 20_000, "the delivery");
    const [got] = receiver.received;
    expect(got?.refused).toBeUndefined();
    expect(got?.signature).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(Math.abs(Number(got?.timestamp) - Date.now() / 1000)).toBeLessThan(30);
    expect(got?.payload).toEqual({ type: "user.created", timestamp: expect.any(String), data: { id: "u1", email: "ann@example.com" } });
    // A body changed in transit, or signed with another secret, does not verify.
    const real = receiver.secret;
    receiver.secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const other = await enqueueWebhook(kit.db.prisma, "user.created", { id: "u2" });
    await until(() => receiver.received.some((r) => r.id === other), 20_000, "the second request");
    expect(receiver.received.find((r) => r.id === other)?.refused).toMatch(/signature/);
    receiver.secret = real;
  });

  it("with the receiver down for a while, then up: every event arrives, each webhook-id accepted once", async () => {
    const endpointId = await endpointFor(["user.created", "user.updated"]);
    await receiver.down();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await enqueueWebhook(kit.db.prisma, i % 2 ? "user.updated" : "user.created", { id: `u${i}` }));
    // An event the endpoint did not ask for is not delivered, and leaves no message behind.
    const unwanted = await enqueueWebhook(kit.db.prisma, "session.created", { userId: "u0", sessionId: "s0" });
    await until(
      async () => (await deliveriesOf(endpointId)).filter((d) => d.attempts >= 2 && d.state === "pending").length === 5,
      20_000,
      "two failed attempts of each delivery",
    );
    const waiting = await deliveriesOf(endpointId);
    expect(waiting.map((d) => d.lastError)).toEqual(Array(5).fill("the connection was refused"));
    expect(waiting.every((d) => d.nextAttemptAt && d.lastAttemptAt && d.nextAttemptAt > d.lastAttemptAt)).toBe(true);
    expect(await kit.db.prisma.webhookMessage.count({ where: { id: unwanted } })).toBe(0);

    await receiver.up();
    await until(async () => (await deliveriesOf(endpointId)).every((d) => d.state === "succeeded"), 20_000, "every delivery to succeed");
    expect([...receiver.accepted()].sort()).toEqual([...ids].sort());
    expect(receiver.received.filter((r) => r.refused)).toEqual([]);
    const done = await deliveriesOf(endpointId);
    expect(done.map((d) => [d.lastStatus, d.lastError, d.nextAttemptAt])).toEqual(Array(5).fill([204, null, null]));
    expect(done.every((d) => d.attempts >= 3 && d.deliveredAt)).toBe(true);
  });

  it("sends the same webhook-id on every retry, freshly signed, until a 2xx; then never again unless an admin retries", async () => {
    const endpointId = await endpointFor(["user.deleted"]);
    receiver.status = 503;
    const id = await enqueueWebhook(kit.db.prisma, "user.deleted", { id: "u9" });
    await until(() => receiver.received.filter((r) => r.id === id).length >= 3, 20_000, "three attempts");
    receiver.status = 200;
    await until(() => receiver.accepted().includes(id), 20_000, "the retry that succeeds");
    const attempts = receiver.received.filter((r) => r.id === id);
    expect(attempts.every((r) => r.payload && r.body === attempts[0]?.body)).toBe(true);
    expect(new Set(attempts.map((r) => r.signature)).size).toBeGreaterThan(1);
    await until(async () => (await deliveriesOf(endpointId))[0]?.state === "succeeded", 5_000, "the log to say so");

    // The log, read as the admin reads it, then a manual retry: one more request, same webhook-id.
    const log = await request(kit.app).get(`${BASE}/${endpointId}/deliveries`).set("cookie", admin.cookie).expect(200);
    const [entry] = log.body.deliveries;
    expect(entry).toMatchObject({ messageId: id, eventType: "user.deleted", state: "succeeded", lastStatus: 200, lastError: null });
    expect(entry.attempts).toBe(attempts.length);
    const retried = await request(kit.app)
      .post(`${BASE}/${endpointId}/deliveries/${entry.id}/retry`)
      .set("cookie", admin.cookie)
      .expect(200);
    expect(retried.body).toMatchObject({ id: entry.id, state: "pending" });
    await until(() => receiver.accepted().filter((a) => a === id).length === 2, 20_000, "the manual retry");
    await until(async () => (await deliveriesOf(endpointId))[0]?.state === "succeeded", 5_000, "the retry to be logged");
    expect((await deliveriesOf(endpointId))[0]?.attempts).toBe(attempts.length + 1);
  });

  it("gives up an attempt at WEBHOOK_TIMEOUT_MS, and an endpoint that never answers holds up no other", async () => {
    const endpointId = await endpointFor(["user.updated"]);
    const silent = createServer(() => {
      // Reads the request and never answers.
    });
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const { port } = silent.address() as AddressInfo;
    const slow = await registerEndpoint(kit.app, admin.cookie, `http://127.0.0.1:${port}/slow`, ["user.updated"]);
    const started = Date.now();
    await enqueueWebhook(kit.db.prisma, "user.updated", { id: "u5" });
    try {
      await until(async () => (await deliveriesOf(endpointId))[0]?.state === "succeeded", 20_000, "the endpoint that answers");
      await until(async () => (await deliveriesOf(slow.id))[0]?.lastError === "no answer within 2000 ms", 20_000, "the timeout");
      expect(Date.now() - started).toBeGreaterThanOrEqual(2_000);
      expect((await deliveriesOf(slow.id))[0]).toMatchObject({ state: "pending", lastStatus: null });
    } finally {
      silent.closeAllConnections();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  it("refuses at send time an endpoint whose address the policy forbids, without connecting", async () => {
    // A row written past the registration check (as one saved before a policy change would be).
    const id = "wh_private";
    await kit.db.prisma.webhookEndpoint.create({
      data: {
        id,
        url: "http://10.255.255.1/hook",
        events: ["user.created"],
        secretSealed: new WebhookSecrets(SECRET).seal(id, "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"),
      },
    });
    await enqueueWebhook(kit.db.prisma, "user.created", { id: "u7" });
    await until(async () => (await deliveriesOf(id))[0]?.attempts === 1, 20_000, "the refused attempt");
    expect((await deliveriesOf(id))[0]).toMatchObject({
      state: "pending",
      lastStatus: null,
      lastError: "the URL was refused: URL must not point to a private, loopback or link-local address",
    });
  });

  it("fails a delivery once its event's retry window has passed; an admin's retry then makes one more attempt", async () => {
    // A database of its own: the other tests' worker, with its longer window, must not take these jobs.
    const short = await identityKit({ env: { ...FAST_WEBHOOKS, WEBHOOK_RETRY_WINDOW_MS: "1500" } });
    const worker = await startWebhookDelivery({ config: short.config, db: short.db, logger });
    const deliveriesOf = (endpointId: string) => short.db.prisma.webhookDelivery.findMany({ where: { endpointId } });
    try {
      const admin = await signUpAdmin(short.app, short.database);
      receiver = await startReceiver();
      receiver.status = 500;
      const endpoint = await registerEndpoint(short.app, admin.cookie, receiver.url, ["session.revoked"]);
      receiver.secret = endpoint.secret;
      const id = await enqueueWebhook(short.db.prisma, "session.revoked", { userId: "u1", sessionId: "s1" });
      await until(async () => (await deliveriesOf(endpoint.id))[0]?.state === "failed", 20_000, "the delivery to fail");
      const [failed] = await deliveriesOf(endpoint.id);
      expect(failed).toMatchObject({ lastStatus: 500, lastError: "the endpoint answered 500", nextAttemptAt: null });
      const sent = receiver.received.filter((r) => r.id === id).length;
      expect(sent).toBe(failed?.attempts);
      expect(sent).toBeGreaterThanOrEqual(2);

      await request(short.app).post(`${BASE}/${endpoint.id}/deliveries/${failed?.id}/retry`).set("cookie", admin.cookie).expect(200);
      await until(async () => (await deliveriesOf(endpoint.id))[0]?.attempts === sent + 1, 20_000, "the manual attempt");
      expect((await deliveriesOf(endpoint.id))[0]).toMatchObject({ state: "failed", nextAttemptAt: null });
      expect(receiver.received.filter((r) => r.id === id)).toHaveLength(sent + 1);
    } finally {
      await worker.stop();
      await short.close();
    }
  });

  it("makes each attempt once: a job for an attempt already made (a crash's leftover, a retry's twin) sends nothing", async () => {
    // A database of its own and no worker running: the test runs the jobs itself, in its order.
    const own = await identityKit({ env: FAST_WEBHOOKS });
    try {
      receiver = await startReceiver();
      receiver.status = 503;
      const { cookie } = await signUpAdmin(own.app, own.database);
      const endpoint = await registerEndpoint(own.app, cookie, receiver.url, ["user.updated"]);
      receiver.secret = endpoint.secret;
      const id = await enqueueWebhook(own.db.prisma, "user.updated", { id: "u3" });
      const settings = own.config.webhooks;
      const queue = new AttemptQueue(settings);
      await new Dispatcher({ prisma: own.db.prisma, queue, settings }).dispatch();
      const attempts = new DeliveryAttempts({
        prisma: own.db.prisma,
        queue,
        secrets: new WebhookSecrets(SECRET),
        policy: webhookUrlPolicy(settings),
        settings,
        logger,
      });
      const [row] = await own.db.prisma.webhookDelivery.findMany({ where: { endpointId: endpoint.id } });
      const deliveryId = row?.id ?? "";
      const sent = () => receiver.received.filter((r) => r.id === id).length;
      const state = async () => own.db.prisma.webhookDelivery.findUniqueOrThrow({ where: { id: deliveryId } });

      expect(await attempts.run({ deliveryId, attempt: 0 })).toBe("done");
      expect([sent(), (await state()).attempts, (await state()).state]).toEqual([1, 1, "pending"]);
      expect(await attempts.run({ deliveryId, attempt: 0 })).toBe("done");
      expect([sent(), (await state()).attempts]).toEqual([1, 1]);

      receiver.status = 204;
      expect(await attempts.run({ deliveryId, attempt: 1 })).toBe("done");
      expect([sent(), (await state()).attempts, (await state()).state]).toEqual([2, 2, "succeeded"]);
      for (const attempt of [0, 1, 2]) expect(await attempts.run({ deliveryId, attempt })).toBe("done");
      expect(sent()).toBe(2);

      // A delivery another worker is sending now is held: the job is failed and pg-boss retries it later.
      await own.db.prisma.webhookDelivery.update({
        where: { id: deliveryId },
        data: { state: "sending", nextAttemptAt: new Date(Date.now() + 60_000) },
      });
      expect(await attempts.run({ deliveryId, attempt: 2 })).toBe("held");
      expect(sent()).toBe(2);
    } finally {
      await own.close();
    }
  });
});
