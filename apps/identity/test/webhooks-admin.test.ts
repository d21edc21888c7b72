import { createdWebhookEndpointSchema, WEBHOOK_MAX_ENDPOINTS, webhookEndpointsResponse } from "@app/contracts";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebhookSecrets } from "../src/webhooks/secrets.js";
import { identityKit, type Kit, SECRET, signUp } from "./kit.js";
import { signUpAdmin } from "./webhooks-kit.js";

// The admin's webhook routes on a real identity and PostgreSQL: who may call them, what they
// accept, and that the secret is answered once and kept sealed.

let kit: Kit & { database: Awaited<ReturnType<typeof identityKit>>["database"] };
let admin: { cookie: string; id: string };
const BASE = "/api/auth/admin/webhooks";

beforeAll(async () => {
  kit = await identityKit();
  admin = await signUpAdmin(kit.app, kit.database);
});

afterAll(async () => {
  await kit?.close();
});

const post = (body: unknown, cookie = admin.cookie) =>
  request(kit.app)
    .post(BASE)
    .set("cookie", cookie)
    .send(body as object);

describe("webhook endpoints", () => {
  it("registers an endpoint and answers its whsec_ secret once; the list never shows it and the row keeps it sealed", async () => {
    const created = await post({ url: "https://hooks.example.com/identity", events: ["user.created", "user.deleted", "user.created"] });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const endpoint = createdWebhookEndpointSchema.parse(created.body);
    expect(endpoint).toMatchObject({
      url: "https://hooks.example.com/identity",
      events: ["user.created", "user.deleted"],
      createdBy: admin.id,
    });
    expect(endpoint.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);

    const listed = await request(kit.app).get(BASE).set("cookie", admin.cookie).expect(200);
    const { endpoints } = webhookEndpointsResponse.parse(listed.body);
    expect(endpoints.find((e) => e.id === endpoint.id)).toEqual({
      id: endpoint.id,
      url: endpoint.url,
      events: endpoint.events,
      createdAt: endpoint.createdAt,
      createdBy: admin.id,
    });
    expect(JSON.stringify(listed.body)).not.toContain(endpoint.secret.slice(6));

    const row = await kit.db.prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: endpoint.id } });
    expect(row.secretSealed).not.toContain(endpoint.secret.slice(6));
    const secrets = new WebhookSecrets(SECRET);
    expect(secrets.open(endpoint.id, row.secretSealed)).toBe(endpoint.secret);
    // Bound to its row: the same sealed text does not open as another endpoint's.
    expect(secrets.open("wh_other", row.secretSealed)).toBeUndefined();

    await request(kit.app).delete(`${BASE}/${endpoint.id}`).set("cookie", admin.cookie).expect(200, { success: true });
    await request(kit.app).delete(`${BASE}/${endpoint.id}`).set("cookie", admin.cookie).expect(404);
    expect(await kit.db.prisma.webhookEndpoint.count({ where: { id: endpoint.id } })).toBe(0);
  });

  it("answers 400 for unknown events, an empty list, a URL that is no URL or carries credentials, and unknown fields", async () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ url: "https://hooks.example.com/", events: ["user.exploded"] }, /events/],
      [{ url: "https://hooks.example.com/", events: [] }, /events/],
      [{ url: "https://hooks.example.com/" }, /events/],
      [{ url: "not a url", events: ["user.created"] }, /url/],
      [{ url: "https://user:pw@hooks.example.com/", events: ["user.created"] }, /credentials/],
      [{ url: "ftp://hooks.example.com/", events: ["user.created"] }, /http/],
      [{ url: "http://10.0.0.5/hook", events: ["user.created"] }, /private/],
      [{ url: "https://hooks.example.com/", events: ["user.created"], secret: "mine" }, /secret/],
    ];
    for (const [body, pattern] of cases) {
      const res = await post(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.code, JSON.stringify(body)).toBe("validation_failed");
      expect(JSON.stringify(res.body.error), JSON.stringify(body)).toMatch(pattern);
    }
    expect(await kit.db.prisma.webhookEndpoint.count()).toBe(0);
  });

  it("allows http and loopback outside production only: production's policy wants https to a public address", async () => {
    expect((await post({ url: "http://127.0.0.1:9/hook", events: ["session.created"] })).status).toBe(201);
    const prod = await identityKit({
      database: kit.database,
      env: { NODE_ENV: "production", BASE_URL: "https://id.example.com", REQUIRE_EMAIL_VERIFICATION: "false" },
    });
    expect(prod.config.webhooks.allowLoopback).toBe(false);
    try {
      const { cookie } = await signUpAdmin(prod.app, kit.database);
      for (const url of ["http://hooks.example.com/", "https://127.0.0.1:9/hook", "https://localhost/hook"]) {
        const res = await request(prod.app)
          .post(BASE)
          .set("cookie", cookie)
          .send({ url, events: ["user.created"] });
        expect(res.status, url).toBe(400);
      }
      expect(
        (
          await request(prod.app)
            .post(BASE)
            .set("cookie", cookie)
            .send({ url: "https://hooks.example.com/", events: ["user.created"] })
        ).status,
      ).toBe(201);
    } finally {
      await prod.close();
    }
    await kit.db.prisma.webhookEndpoint.deleteMany();
  });

  it("answers 401 without a session and 403 to a signed-in user who is no admin, on every route", async () => {
    const { cookie } = await signUp(kit.app);
    const routes = [
      (c?: string) => (c ? request(kit.app).get(BASE).set("cookie", c) : request(kit.app).get(BASE)),
      (c?: string) => {
        const r = request(kit.app).post(BASE);
        return (c ? r.set("cookie", c) : r).send({ url: "https://hooks.example.com/", events: ["user.created"] });
      },
      (c?: string) => (c ? request(kit.app).delete(`${BASE}/wh_x`).set("cookie", c) : request(kit.app).delete(`${BASE}/wh_x`)),
      (c?: string) =>
        c ? request(kit.app).get(`${BASE}/wh_x/deliveries`).set("cookie", c) : request(kit.app).get(`${BASE}/wh_x/deliveries`),
      (c?: string) => {
        const r = request(kit.app).post(`${BASE}/wh_x/deliveries/dlv_x/retry`);
        return c ? r.set("cookie", c) : r;
      },
    ];
    for (const route of routes) {
      expect((await route()).status).toBe(401);
      const refused = await route(cookie);
      expect([refused.status, refused.body.code]).toEqual([403, "forbidden"]);
    }
    expect(await kit.db.prisma.webhookEndpoint.count()).toBe(0);
  });

  it(`holds at most ${WEBHOOK_MAX_ENDPOINTS} endpoints, even when admins register at once`, async () => {
    const second = await signUpAdmin(kit.app, kit.database);
    const answers = await Promise.all(
      Array.from({ length: WEBHOOK_MAX_ENDPOINTS + 5 }, (_, i) =>
        post({ url: `https://hooks.example.com/${i}`, events: ["user.created"] }, i % 2 ? admin.cookie : second.cookie),
      ),
    );
    expect(answers.filter((a) => a.status === 201)).toHaveLength(WEBHOOK_MAX_ENDPOINTS);
    const refused = answers.filter((a) => a.status !== 201);
    expect(refused.map((a) => a.body.code)).toEqual(Array(5).fill("conflict"));
    expect(await kit.db.prisma.webhookEndpoint.count()).toBe(WEBHOOK_MAX_ENDPOINTS);
    await kit.db.prisma.webhookEndpoint.deleteMany();
  });

  it("answers 404 for the log or a retry of an unknown endpoint or delivery, and 400 for a malformed cursor", async () => {
    const created = await post({ url: "https://hooks.example.com/log", events: ["user.created"] });
    const id = created.body.id as string;
    await request(kit.app).get(`${BASE}/wh_missing/deliveries`).set("cookie", admin.cookie).expect(404);
    await request(kit.app).post(`${BASE}/${id}/deliveries/dlv_missing/retry`).set("cookie", admin.cookie).expect(404);
    const bad = await request(kit.app).get(`${BASE}/${id}/deliveries?cursor=bm9wZQ`).set("cookie", admin.cookie);
    expect([bad.status, bad.body.code]).toEqual([400, "bad_request"]);
    const tooMany = await request(kit.app).get(`${BASE}/${id}/deliveries?limit=1000`).set("cookie", admin.cookie);
    expect([tooMany.status, tooMany.body.code]).toEqual([400, "validation_failed"]);
    expect((await request(kit.app).get(`${BASE}/${id}/deliveries`).set("cookie", admin.cookie).expect(200)).body).toEqual({
      deliveries: [],
      nextCursor: null,
    });
  });
});
