import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import { createDb, type Db } from "@app/db";
import { createTestDatabase, type TestDatabase } from "@app/db/testing";
import { createLogger, redactUrl, routeKey } from "@app/http-kit";
import { createMailer, type Mailer } from "@app/mailer";
import { type MailCatcher, startMailCatcher } from "@app/mailer/catcher";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp, type IdentityApp } from "../src/app.js";
import { testConfig } from "../src/config.js";
import { MailOutboxWorker } from "../src/services/mail-outbox-worker.js";
import { DRIVERS } from "./conformance/index.js";
import { ORIGIN, SECRET } from "./kit.js";
import { linkOf, TEST_WORKER_OPTIONS } from "./mail-kit.js";
import { Browser, startProvider, type TestProvider } from "./oidc-kit.js";

// Every route of identity's table answered with real requests (real PostgreSQL, real SMTP to the
// catcher, a real OpenID Provider), each success checked against its contract schema by the
// table (NODE_ENV=test), and the OpenAPI document served from the same table.
const CLIENT = { clientId: "identity-test", clientSecret: "identity-test-secret-0123456789" };
const PASSWORD = "correct horse battery";
const NEW_PASSWORD = "another horse battery";
const COOKIE = "identity.session_token";

let server: Server;
let baseUrl: string;
let provider: TestProvider;
let database: TestDatabase;
let db: Db;
let catcher: MailCatcher;
let mailer: Mailer;
let worker: MailOutboxWorker;
let built: IdentityApp;

beforeAll(async () => {
  server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  provider = await startProvider({ ...CLIENT, redirectUri: `${baseUrl}/api/auth/callback/local` });
  database = await createTestDatabase();
  catcher = await startMailCatcher();
  mailer = createMailer({
    smtpUrl: catcher.url.replace("smtp://", "smtp://identity:secret@"),
    from: "Accounts <no-reply@example.com>",
    timeoutMs: 3_000,
  });
  const config = testConfig({
    DATABASE_URL: database.identityUrl,
    AUTH_SECRET: SECRET,
    CORS_ORIGINS: ORIGIN,
    BASE_URL: baseUrl,
    OIDC_PROVIDERS: "local",
    OIDC_LOCAL_ISSUER: provider.issuer,
    OIDC_LOCAL_CLIENT_ID: CLIENT.clientId,
    OIDC_LOCAL_CLIENT_SECRET: CLIENT.clientSecret,
  });
  const logger = createLogger({ name: "identity-test", level: "warn", destination: new Writable({ write: (_c, _e, cb) => cb() }) });
  db = createDb(database.identityUrl, { max: 5 });
  built = createApp({ config, db, logger, mailer });
  worker = new MailOutboxWorker({ outbox: built.service.mailOutbox, mailer, logger, options: TEST_WORKER_OPTIONS });
  worker.start();
  server.on("request", built.app);
});

afterAll(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => server?.close(() => resolve()));
  await worker?.stop();
  await built?.close();
  await db?.close();
  mailer?.close();
  await catcher?.close();
  await provider?.close();
  await database?.drop();
});

/** A client of identity: JSON requests from the web app's origin, in one cookie-keeping browser. */
function client(browser = new Browser()) {
  const send = (method: string, path: string, body?: unknown) =>
    browser.request(new URL(path, baseUrl), {
      method,
      headers: { accept: "application/json", origin: ORIGIN, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  return {
    browser,
    get: (path: string) => send("GET", path),
    post: (path: string, body: unknown = {}) => send("POST", path, body),
  };
}

/** Answers `status` and its JSON body. */
async function expectJson(res: Response, status = 200): Promise<Record<string, unknown>> {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  return JSON.parse(text) as Record<string, unknown>;
}

let n = 0;
const fresh = (label: string) => `${label}-${++n}-${Date.now()}@example.com`;
const mailTo = (to: string, subject: string) => catcher.waitFor((m) => m.to.includes(to) && m.subject.includes(subject));

describe("identity's route table", () => {
  it("answers every route with a body its contract schema accepts", async () => {
    const anonymous = client();
    expect((await anonymous.get("/healthz")).status).toBe(200);
    expect((await anonymous.get("/readyz")).status).toBe(200);
    expect(await expectJson(await anonymous.get("/api/auth/providers"))).toEqual([{ id: "local", name: expect.any(String) }]);
    expect((await expectJson(await anonymous.get("/api/auth/jwks"))).keys).toHaveLength(1);
    expect(await (await anonymous.get("/api/auth/get-session")).json()).toBeNull();
    expect((await anonymous.get("/api/auth/openapi.json")).status).toBe(200);

    // The owner: email and password, a verified address, settings, a second session.
    const email = fresh("owner");
    const owner = client();
    await expectJson(await owner.post("/api/auth/sign-up/email", { email, password: PASSWORD, name: "Owner" }));
    const session = await owner.get("/api/auth/get-session");
    expect(session.headers.get("set-auth-jwt")).toBeTruthy();
    await expectJson(session);
    await expectJson(await owner.post("/api/auth/get-session"));
    await expectJson(await owner.get("/api/auth/token"));
    await expectJson(await owner.post("/api/auth/update-user", { name: "Owner Renamed" }));

    await expectJson(await owner.post("/api/auth/send-verification-email", { email }));
    const verifyLink = linkOf(await mailTo(email, "Verify your email address"));
    // A browser without the session gets the one-click page; the owner's click answers JSON.
    const page = await new Browser().request(verifyLink, { headers: { accept: "text/html" } });
    expect([page.status, page.headers.get("content-type")]).toEqual([200, "text/html; charset=utf-8"]);
    const token = new URL(verifyLink).searchParams.get("token") ?? "";
    const verified = await expectJson(await owner.post(`/api/auth/verify-email?token=${encodeURIComponent(token)}`, {}));
    expect((verified.user as { emailVerified: boolean }).emailVerified).toBe(true);

    await expectJson(await owner.post("/api/auth/request-password-reset", { email, redirectTo: `${ORIGIN}/reset-password` }));
    const resetLink = linkOf(await mailTo(email, "Reset your password"));
    const landing = await owner.browser.request(resetLink);
    expect(landing.status).toBe(302);
    const resetToken = new URL(landing.headers.get("location") ?? "").searchParams.get("token");
    expect(resetToken).toBeTruthy();
    await expectJson(await anonymous.post("/api/auth/reset-password", { token: resetToken, newPassword: NEW_PASSWORD }));

    const second = client();
    await expectJson(await second.post("/api/auth/sign-in/email", { email, password: NEW_PASSWORD }));
    const sessions = (await (await second.get("/api/auth/list-sessions")).json()) as { id: string; current: boolean }[];
    await expectJson(await second.post("/api/auth/revoke-session", { id: sessions.find((s) => s.current)?.id }));
    await expectJson(await owner.post("/api/auth/sign-in/email", { email, password: NEW_PASSWORD }));
    await expectJson(await owner.post("/api/auth/change-password", { currentPassword: NEW_PASSWORD, newPassword: PASSWORD }));
    await expectJson(await owner.post("/api/auth/revoke-other-sessions"));
    await expectJson(await owner.post("/api/auth/change-email", { newEmail: fresh("moved") }));

    // Providers: a new account signs in at the local IdP; the owner links it, lists and unlinks it.
    provider.loginAs({ sub: `sub-new-${n}`, email: fresh("social"), email_verified: true, name: "Social" });
    const newcomer = client();
    const started = await expectJson(
      await newcomer.post("/api/auth/sign-in/social", { provider: "local", callbackURL: `${ORIGIN}/`, disableRedirect: true }),
    );
    expect((await newcomer.browser.follow(String(started.url), (u) => u.origin === ORIGIN)).href).toBe(`${ORIGIN}/`);
    expect(newcomer.browser.cookie(baseUrl, COOKIE)).toBeTruthy();
    await expectJson(await newcomer.post("/api/auth/sign-out"));

    provider.loginAs({ sub: `sub-owner-${n}`, email, email_verified: true, name: "Owner" });
    const link = await expectJson(
      await owner.post("/api/auth/link-social", { provider: "local", callbackURL: `${ORIGIN}/account`, disableRedirect: true }),
    );
    expect((await owner.browser.follow(String(link.url), (u) => u.origin === ORIGIN)).href).toBe(`${ORIGIN}/account`);
    const accounts = (await (await owner.get("/api/auth/list-accounts")).json()) as { id: string; providerId: string }[];
    expect(accounts.map((a) => a.providerId).sort()).toEqual(["credential", "local"]);
    await expectJson(await owner.post("/api/auth/unlink-account", { accountId: accounts.find((a) => a.providerId === "local")?.id }));
    await expectJson(await owner.post("/api/auth/delete-user", { password: PASSWORD }));

    for (const drive of Object.values(DRIVERS)) {
      await drive({ baseUrl, built, catcher, provider, client, expectJson, fresh, mailTo, password: PASSWORD });
    }

    const coverage = built.routes.coverage();
    expect(coverage.filter((route) => route.answered === 0).map((route) => route.key)).toEqual([]);
    expect(coverage.filter((route) => route.nonConforming.length > 0)).toEqual([]);
    expect(coverage.length).toBeGreaterThanOrEqual(29);
  });

  it("serves its OpenAPI 3.1 document at /api/auth/openapi.json, built from the table", async () => {
    const res = await client().get("/api/auth/openapi.json");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
    const doc = (await res.json()) as {
      openapi: string;
      paths: Record<string, Record<string, { security: unknown[]; "x-guards"?: string[]; responses: Record<string, unknown> }>>;
      components: { securitySchemes: Record<string, unknown> };
    };
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.components.securitySchemes.sessionCookie).toEqual({ type: "apiKey", in: "cookie", name: COOKIE });
    const documented = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.keys(ops).map((method) => routeKey({ method: method as "get", path: path.replace(/\{(\w+)\}/g, ":$1") })),
    );
    expect(documented.sort()).toEqual(built.routes.routes.map(routeKey).sort());
    const changePassword = doc.paths["/api/auth/change-password"]?.post;
    expect(changePassword?.security).toEqual([{ sessionCookie: [] }]);
    expect(changePassword?.["x-guards"]).toEqual([
      "origin",
      "noStore",
      "rateLimit(passwordCheck-ip)",
      "jsonBody",
      "cookies",
      "passwordQueue",
      "session",
      "rateLimit(passwordCheck-user)",
      "signedIn",
      "notImpersonated",
    ]);
    // Every route under the auth base path starts with the origin check and no-store, on the route.
    for (const route of built.routes.routes.filter((r) => r.path.startsWith("/api/auth/") && !r.path.endsWith("/openapi.json"))) {
      expect(
        route.guards?.slice(0, 2).map((g) => g.name),
        routeKey(route),
      ).toEqual(["origin", "noStore"]);
    }
    expect(doc.paths["/api/auth/get-session"]?.get?.responses["200"]).toMatchObject({ description: "Raw JSON (not wrapped)" });
  });

  it("puts better-auth's top-level code and message on errors under the auth base path only, 404s included", async () => {
    const anonymous = client();
    const missing = { code: "not_found", message: "no route for GET /api/auth/nope" };
    expect(await expectJson(await anonymous.get("/api/auth/nope"), 404)).toEqual({ ok: false, error: missing, ...missing });
    const upper = await expectJson(await anonymous.get("/API/AUTH/nope"), 404);
    expect(upper.code).toBe("not_found");
    expect(await expectJson(await anonymous.get("/api/authors"), 404)).toEqual({
      ok: false,
      error: { code: "not_found", message: "no route for GET /api/authors" },
    });
    const unauthorized = await expectJson(await anonymous.post("/api/auth/get-session"), 401);
    expect([unauthorized.code, unauthorized.message]).toEqual(["unauthorized", "no valid session: sign in first"]);
  });

  it("keeps every secret path parameter of the table out of the request log", () => {
    const secret = built.routes.routes.filter((route) => /:\w*(token|secret|code|key|password)/i.test(route.path));
    expect(secret.map(routeKey)).toEqual(["GET /api/auth/reset-password/:token"]);
    for (const route of secret) expect(redactUrl(route.path.replace(/:\w+/g, "s3cr3t-value"))).not.toContain("s3cr3t-value");
  });
});
