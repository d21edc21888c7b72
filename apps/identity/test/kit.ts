import { Writable } from "node:stream";
import { type CountedDb, createCountedDb, createTestDatabase, type TestDatabase } from "@app/db/testing";
import { createLogger } from "@app/http-kit";
import type { Mailer } from "@app/mailer";
import type { Express } from "express";
import request from "supertest";
import { createApp, type IdentityApp } from "../src/app.js";
import { type IdentityConfig, testConfig } from "../src/config.js";
import type { RateLimitRedis } from "../src/middleware/rate-limit-stores.js";
import type { RateLimits } from "../src/middleware/rate-limits.js";
import type { IdentityService } from "../src/services/identity.js";

export const SECRET = "test-secret-test-secret-test-secret-0001";
export const ORIGIN = "http://localhost:5173";

/** A controllable clock for expiry tests. */
export function frozenClock(start = Date.UTC(2026, 10, 21, 12, 0, 0)) {
  let now = start;
  return {
    now: () => now,
    advance(ms: number) {
      now += ms;
    },
  };
}

/** Everything a test needs: the real app on its own migrated database, and its captured logs. */
export interface Kit {
  app: Express;
  service: IdentityService;
  db: CountedDb;
  config: IdentityConfig;
  rateLimits: RateLimits;
  organizations: IdentityApp["organizations"];
  oauth: IdentityApp["oauth"];
  logs: string[];
  close(): Promise<void>;
}

/** Builds an identity app (never listening) on `database`, or on a fresh test database. */
export async function identityKit(
  options: {
    env?: Record<string, string>;
    now?: () => number;
    database?: TestDatabase;
    rateLimitRedis?: RateLimitRedis;
    /** Outgoing mail (tests point it at a mail catcher they started: test/mail-kit.ts). */
    mailer?: Mailer;
  } = {},
): Promise<Kit & { database: TestDatabase }> {
  const database = options.database ?? (await createTestDatabase());
  // Identity connects as its own role (auth_identity), as in production: the API's tables are refused.
  // Rate limits high enough that ordinary tests are never throttled; rate limit tests lower them.
  const config = testConfig({
    DATABASE_URL: database.identityUrl,
    AUTH_SECRET: SECRET,
    CORS_ORIGINS: ORIGIN,
    RATE_LIMIT_IP_MAX: "100000",
    RATE_LIMIT_ACCOUNT_MAX: "100000",
    RATE_LIMIT_ACCOUNT_DELAY_AFTER: "100000",
    ...options.env,
  });
  const logs: string[] = [];
  const destination = new Writable({
    write(chunk, _enc, cb) {
      logs.push(String(chunk));
      cb();
    },
  });
  const logger = createLogger({ name: "identity-test", level: "debug", destination });
  const db = createCountedDb(database.identityUrl, { max: 5 });
  const built = createApp({
    config,
    db,
    logger,
    ...(options.now ? { now: options.now } : {}),
    ...(options.rateLimitRedis ? { rateLimitRedis: options.rateLimitRedis } : {}),
    ...(options.mailer ? { mailer: options.mailer } : {}),
  });
  const { app, service } = built;
  return {
    app,
    service,
    db,
    config,
    rateLimits: built.rateLimits,
    organizations: built.organizations,
    oauth: built.oauth,
    logs,
    database,
    async close() {
      await built.close();
      await db.close();
      if (!options.database) await database.drop();
    },
  };
}

/** The `name=value` part of the session cookie in a response, if set. */
export function sessionCookie(res: request.Response, name = "identity.session_token"): string | undefined {
  const raw = res.headers["set-cookie"] as unknown as string[] | undefined;
  const line = raw?.find((c) => c.startsWith(`${name}=`));
  return line?.split(";")[0];
}

/** The full Set-Cookie line of the session cookie. */
export function sessionCookieLine(res: request.Response, name = "identity.session_token"): string | undefined {
  const raw = res.headers["set-cookie"] as unknown as string[] | undefined;
  return raw?.find((c) => c.startsWith(`${name}=`));
}

let counter = 0;
/** Signs a new user up and returns the cookie and the user. */
export async function signUp(app: Express, overrides: Partial<{ email: string; password: string; name: string }> = {}) {
  counter += 1;
  const body = {
    email: `user${counter}-${Date.now()}@example.com`,
    password: "correct horse battery",
    name: `User ${counter}`,
    ...overrides,
  };
  const res = await request(app).post("/api/auth/sign-up/email").send(body).expect(200);
  const cookie = sessionCookie(res);
  if (!cookie) throw new Error("sign-up set no session cookie");
  return { cookie, user: res.body.user as { id: string; email: string; name: string }, body, res };
}
