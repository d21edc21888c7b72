import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createDb } from "@app/db";
import type { TestDatabase } from "@app/db/testing";
import { expect } from "vitest";
import { ORIGIN } from "./kit.js";
import { type MailKit, mailKit } from "./mail-kit.js";
import { Browser, startProvider, type TestProvider } from "./oidc-kit.js";

// The admin tests' stack: identity listening on a loopback port (real PostgreSQL, mail over SMTP
// to a catcher) with a real OpenID Provider as sign-in provider, and browsers with cookie jars.

export const PASSWORD = "correct horse battery";
export const SESSION_COOKIE = "identity.session_token";
export const ADMIN_SESSION_COOKIE = "identity.admin_session";
const CLIENT = { clientId: "identity-test", clientSecret: "identity-test-secret-0123456789" };

/** Identity at `baseUrl` with its provider. */
export interface AdminStack {
  kit: MailKit;
  baseUrl: string;
  provider: TestProvider;
  /** A new browser on the web app's origin. */
  browser(): AdminBrowser;
  /** Gives the user the API's admin role, as `pnpm admin:grant` does (the admin database URL writes user_role). */
  grantAdmin(userId: string): Promise<void>;
  close(): Promise<void>;
}

/** One answer: status, JSON body (or null) and headers. */
export interface Answer {
  status: number;
  body: Record<string, unknown> | null;
  headers: Headers;
}

/** A browser on the web app's origin: JSON requests to identity, with its cookies. */
export class AdminBrowser {
  readonly raw = new Browser();
  constructor(readonly baseUrl: string) {}

  async send(method: "GET" | "POST", path: string, body?: unknown): Promise<Answer> {
    const res = await this.raw.request(new URL(path, this.baseUrl), {
      method,
      headers: { accept: "application/json", origin: ORIGIN, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : null, headers: res.headers };
  }

  get(path: string): Promise<Answer> {
    return this.send("GET", path);
  }

  post(path: string, body: unknown = {}): Promise<Answer> {
    return this.send("POST", path, body);
  }

  cookie(name: string): string | undefined {
    return this.raw.cookie(this.baseUrl, name);
  }

  /** get-session's user id and JWT (`set-auth-jwt`), or nulls when it answers no session. */
  async session(): Promise<{ userId: string | null; jwt: string | null; impersonatedBy: string | null }> {
    const res = await this.get("/api/auth/get-session");
    const body = res.body as { user: { id: string }; session: { impersonatedBy: string | null } } | null;
    return { userId: body?.user.id ?? null, jwt: res.headers.get("set-auth-jwt"), impersonatedBy: body?.session.impersonatedBy ?? null };
  }
}

/** Asserts the status (showing the body when it differs) and returns the body. */
export function expectStatus(answer: Answer, status: number): Record<string, unknown> {
  expect(answer.status, JSON.stringify(answer.body)).toBe(status);
  return answer.body ?? {};
}

let n = 0;
/** A new address. */
export const freshEmail = (label: string) => `${label}-${++n}-${Date.now()}@example.com`;

/** Signs a new user up in `browser` (its session cookie set); returns the user. */
export async function signUp(browser: AdminBrowser, email = freshEmail("user")): Promise<{ id: string; email: string }> {
  const body = expectStatus(await browser.post("/api/auth/sign-up/email", { email, password: PASSWORD, name: "Someone" }), 200);
  return body.user as { id: string; email: string };
}

/** Starts the stack; `now` is the app's clock. */
export async function adminStack(options: { now?: () => number; env?: Record<string, string> } = {}): Promise<AdminStack> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const provider = await startProvider({ ...CLIENT, redirectUri: `${baseUrl}/api/auth/callback/local` });
  const kit = await mailKit({
    ...(options.now ? { now: options.now } : {}),
    env: {
      BASE_URL: baseUrl,
      OIDC_PROVIDERS: "local",
      OIDC_LOCAL_ISSUER: provider.issuer,
      OIDC_LOCAL_CLIENT_ID: CLIENT.clientId,
      OIDC_LOCAL_CLIENT_SECRET: CLIENT.clientSecret,
      ...options.env,
    },
  });
  server.on("request", kit.app);
  return {
    kit,
    baseUrl,
    provider,
    browser: () => new AdminBrowser(baseUrl),
    grantAdmin: (userId) => grantAdmin(kit.database, userId),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await provider.close();
      await kit.close();
    },
  };
}

/** Inserts the admin role into the API's user_role as the database's administrator. */
export async function grantAdmin(database: TestDatabase, userId: string): Promise<void> {
  const db = createDb(database.url, { max: 1 });
  try {
    await db.pool.query(`INSERT INTO user_role (user_id, role) VALUES ($1, 'admin') ON CONFLICT DO NOTHING`, [userId]);
  } finally {
    await db.close();
  }
}
