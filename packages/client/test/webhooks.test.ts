import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type WebhookDeliveryView, webhookPayloadSchema } from "@app/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AppClient, createClient, memoryStorage } from "../src/index.js";
import { cookieFetch, freshEmail, grantRole, rejection, signUpSignedIn, startStack } from "./helpers.js";

// Admins' webhooks through the SDK (client.auth.webhooks) against a real stack on PostgreSQL: a
// real receiver on loopback (allowed outside production) checks each request's Standard Webhooks
// signature by the specification's own recipe, the delivery log and a manual retry are read back
// through the SDK, and every refusal is an ApiError with its status and code.
const PASSWORD = "correct horse battery";
/** Short schedules, so deliveries and retries happen within a test's time. */
const FAST = { WEBHOOK_POLL_INTERVAL_MS: "500", WEBHOOK_RETRY_BASE_MS: "200", WEBHOOK_RETRY_MAX_MS: "800", WEBHOOK_TIMEOUT_MS: "2000" };

interface Received {
  id: string;
  timestamp: string;
  signature: string;
  body: string;
}

/** A webhook receiver on 127.0.0.1 that records every request and answers `status`. */
async function startReceiver(): Promise<{ url: string; received: Received[]; status: number; close(): Promise<void> }> {
  const header = (headers: IncomingHttpHeaders, name: string) => String(headers[name] ?? "");
  const receiver = {
    url: "",
    received: [] as Received[],
    status: 204,
    close: async () => {},
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      receiver.received.push({
        id: header(req.headers, "webhook-id"),
        timestamp: header(req.headers, "webhook-timestamp"),
        signature: header(req.headers, "webhook-signature"),
        body: Buffer.concat(chunks).toString("utf8"),
      });
      res.writeHead(receiver.status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  receiver.close = () => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return receiver;
}

/** Whether `signature` holds a v1 HMAC-SHA256 of `id.timestamp.body` under the whsec_ secret (Standard Webhooks). */
function signedBy(secret: string, request: Received): boolean {
  const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
  const expected = createHmac("sha256", key).update(`${request.id}.${request.timestamp}.${request.body}`).digest();
  return request.signature.split(" ").some((part) => {
    const [version, value = ""] = part.split(",");
    const given = Buffer.from(value, "base64");
    return version === "v1" && given.length === expected.length && timingSafeEqual(given, expected);
  });
}

/** Polls `check` every 50 ms until it answers a value (at most `timeoutMs`). */
async function until<T>(check: () => Promise<T | undefined> | T | undefined, what: string, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

let env: Awaited<ReturnType<typeof startStack>>;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
beforeAll(async () => {
  receiver = await startReceiver();
  env = await startStack(FAST);
});
afterAll(async () => {
  await env?.stop();
  await receiver?.close();
});

function browser(): AppClient {
  return createClient({ baseUrl: env.stack.baseUrl, storage: memoryStorage(), fetch: cookieFetch().fetch });
}

async function signedUp(prefix: string) {
  const client = browser();
  const email = freshEmail(prefix);
  const { user } = await signUpSignedIn(client, { email, password: PASSWORD, name: `${prefix} person` });
  return { client, email, id: user.id };
}

async function admin() {
  const a = await signedUp("hooks-admin");
  await grantRole(env.database.url, a.id, "admin");
  return a;
}

describe("client.auth.webhooks", () => {
  it("refuses every call of a non-admin with 403 forbidden and of a signed-out caller with 401", async () => {
    const boss = await admin();
    const endpoint = await boss.client.auth.webhooks.create({ url: "https://hooks.example.com/a", events: ["user.deleted"] });
    const plain = await signedUp("hooks-plain");
    const calls = (client: AppClient) => [
      () => client.auth.webhooks.list(),
      () => client.auth.webhooks.create({ url: "https://hooks.example.com/b", events: ["user.created"] }),
      () => client.auth.webhooks.remove(endpoint.id),
      () => client.auth.webhooks.deliveries(endpoint.id),
      () => client.auth.webhooks.retry(endpoint.id, "del_unknown"),
    ];
    for (const call of calls(plain.client)) expect(await rejection(call())).toMatchObject({ status: 403, code: "forbidden" });
    for (const call of calls(browser())) expect(await rejection(call())).toMatchObject({ status: 401, code: "unauthorized" });
    // Nothing a refused caller asked for happened.
    const listed = await boss.client.auth.webhooks.list();
    expect(listed.map((e) => e.id)).toContain(endpoint.id);
    expect(listed.map((e) => e.url)).not.toContain("https://hooks.example.com/b");
    await boss.client.auth.webhooks.remove(endpoint.id);
  });

  it("registers an endpoint with its whsec_ secret once; a sign-up arrives signed; the log shows it; retry resends the same webhook-id", async () => {
    const boss = await admin();
    const created = await boss.client.auth.webhooks.create({ url: receiver.url, events: ["user.created", "user.created"] });
    expect(Object.keys(created).sort()).toEqual(["createdAt", "createdBy", "events", "id", "secret", "url"]);
    expect(created).toMatchObject({ url: receiver.url, events: ["user.created"], createdBy: boss.id });
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    const listed = (await boss.client.auth.webhooks.list()).find((e) => e.id === created.id);
    expect(listed).toEqual({ id: created.id, url: created.url, events: created.events, createdAt: created.createdAt, createdBy: boss.id });
    expect(JSON.stringify(await boss.client.auth.webhooks.list())).not.toContain(created.secret.slice(6));

    const newcomer = await signedUp("hooks-newcomer");
    const first = await until(
      () => receiver.received.find((r) => r.body.includes(newcomer.id)),
      "the user.created delivery of the new user",
    );
    expect(signedBy(created.secret, first)).toBe(true);
    expect(signedBy(`whsec_${Buffer.alloc(32, 1).toString("base64")}`, first)).toBe(false);
    expect(Math.abs(Number(first.timestamp) - Date.now() / 1000)).toBeLessThan(60);
    const payload = webhookPayloadSchema.parse(JSON.parse(first.body));
    expect(payload).toMatchObject({ type: "user.created", data: { id: newcomer.id, email: newcomer.email } });
    expect(first.body).not.toContain(PASSWORD);

    const delivered = await until(async () => {
      const log = await boss.client.auth.webhooks.deliveries(created.id);
      return log.deliveries.find((d) => d.messageId === first.id && d.state === "succeeded");
    }, "the delivery logged as succeeded");
    expect(delivered).toMatchObject<Partial<WebhookDeliveryView>>({ eventType: "user.created", attempts: 1, lastStatus: 204 });
    expect(delivered.deliveredAt).toEqual(expect.any(String));

    const again = await boss.client.auth.webhooks.retry(created.id, delivered.id);
    expect(again).toMatchObject({ id: delivered.id, messageId: first.id, state: "pending" });
    const resent = await until(() => {
      const copies = receiver.received.filter((r) => r.id === first.id);
      return copies.length >= 2 ? copies : undefined;
    }, "the retried request");
    expect(resent[1]?.body).toBe(first.body);
    expect(signedBy(created.secret, resent[1] as Received)).toBe(true);
    const logged = await until(async () => {
      const log = await boss.client.auth.webhooks.deliveries(created.id);
      const row = log.deliveries.find((d) => d.id === delivered.id);
      return row?.state === "succeeded" && row.attempts === 2 ? row : undefined;
    }, "the retry logged");
    expect(logged.messageId).toBe(first.id);

    await boss.client.auth.webhooks.remove(created.id);
    expect((await boss.client.auth.webhooks.list()).map((e) => e.id)).not.toContain(created.id);
    expect(await rejection(boss.client.auth.webhooks.deliveries(created.id))).toMatchObject({ status: 404, code: "not_found" });
  });

  it("pages the delivery log with limit and nextCursor, each delivery once", async () => {
    const boss = await admin();
    const created = await boss.client.auth.webhooks.create({ url: receiver.url, events: ["user.created"] });
    const users = [await signedUp("hooks-page"), await signedUp("hooks-page"), await signedUp("hooks-page")];
    const whole = await until(async () => {
      const log = await boss.client.auth.webhooks.deliveries(created.id, { limit: 100 });
      return log.deliveries.length >= users.length ? log : undefined;
    }, "three deliveries logged");
    expect(whole.nextCursor).toBeNull();
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await boss.client.auth.webhooks.deliveries(created.id, { limit: 2, ...(cursor ? { cursor } : {}) });
      expect(page.deliveries.length).toBeLessThanOrEqual(2);
      seen.push(...page.deliveries.map((d) => d.id));
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    expect(seen).toEqual(whole.deliveries.map((d) => d.id));
    await boss.client.auth.webhooks.remove(created.id);
  });

  it("answers bad input with 400 and unknown ids with 404, as ApiErrors", async () => {
    const boss = await admin();
    const bodies = [
      { url: "https://hooks.example.com/", events: ["user.exploded"] },
      { url: "https://hooks.example.com/", events: [] },
      { url: "not a url", events: ["user.created"] },
      { url: "https://user:pw@hooks.example.com/", events: ["user.created"] },
      { url: "http://10.0.0.5/hook", events: ["user.created"] },
      { url: "http://169.254.169.254/latest/meta-data", events: ["user.created"] },
    ];
    for (const body of bodies) {
      const error = await rejection(boss.client.auth.webhooks.create(body as Parameters<AppClient["auth"]["webhooks"]["create"]>[0]));
      expect({ body, status: error.status, code: error.code }).toEqual({ body, status: 400, code: "validation_failed" });
      expect(error.issues.length, JSON.stringify(body)).toBeGreaterThan(0);
    }
    expect((await boss.client.auth.webhooks.list()).map((e) => e.url)).not.toContain("http://10.0.0.5/hook");

    const created = await boss.client.auth.webhooks.create({ url: "https://hooks.example.com/c", events: ["session.created"] });
    const pastTheCalendar = Buffer.from(`${Number.MAX_SAFE_INTEGER}.x`).toString("base64url");
    for (const cursor of ["!!", "bm90IGEgY3Vyc29y", pastTheCalendar]) {
      const error = await rejection(boss.client.auth.webhooks.deliveries(created.id, { cursor }));
      expect({ cursor, status: error.status, code: error.code }).toEqual({ cursor, status: 400, code: "bad_request" });
    }
    for (const limit of [0, 101]) {
      expect(await rejection(boss.client.auth.webhooks.deliveries(created.id, { limit }))).toMatchObject({ status: 400 });
    }
    expect(await rejection(boss.client.auth.webhooks.retry(created.id, "del_unknown"))).toMatchObject({ status: 404, code: "not_found" });
    expect(await rejection(boss.client.auth.webhooks.deliveries("wh_unknown"))).toMatchObject({ status: 404, code: "not_found" });
    await boss.client.auth.webhooks.remove(created.id);
    expect(await rejection(boss.client.auth.webhooks.remove(created.id))).toMatchObject({ status: 404, code: "not_found" });
  });
});
