import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { SignInBody, SignUpBody } from "@app/contracts";
import { createTestDatabase, type TestDatabase } from "@app/db/testing";
import { launchStack, type RunningStack } from "@app/stack";
import pg from "pg";
import { expect } from "vitest";
import { ApiError, type AppClient, type FetchLike, type SignedIn } from "../src/index.js";

/** A fetch that keeps cookies like a browser would (one jar per simulated browser), counting calls per path. */
export function cookieFetch(): { fetch: FetchLike; calls: Map<string, number>; cookies: Map<string, string> } {
  const cookies = new Map<string, string>();
  const calls = new Map<string, number>();
  const fetchWithJar: FetchLike = async (input, init = {}) => {
    const path = new URL(input).pathname;
    calls.set(path, (calls.get(path) ?? 0) + 1);
    const headers = new Headers(init.headers);
    // Like a browser: cookies only with credentials "include" (identity calls), never on "omit".
    if (init.credentials === "include" && cookies.size) {
      headers.set("cookie", [...cookies].map(([k, v]) => `${k}=${v}`).join("; "));
    }
    const response = await fetch(input, { ...init, headers });
    for (const line of response.headers.getSetCookie()) {
      const [pair = "", ...attributes] = line.split(";");
      const eq = pair.indexOf("=");
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const expired = attributes.some((a) => /^\s*expires=/i.test(a) && Date.parse(a.split("=")[1] ?? "") < Date.now());
      if (!value || expired) cookies.delete(name);
      else cookies.set(name, value);
    }
    return response;
  };
  return { fetch: fetchWithJar, calls, cookies };
}

/** A real stack (identity, API, gateway) on a fresh database; `env` goes to every service (e.g. SMTP_URL). */
export async function startStack(
  env: Record<string, string> = {},
): Promise<{ stack: RunningStack; database: TestDatabase; stop(): Promise<void> }> {
  const database = await createTestDatabase();
  const uploads = await mkdtemp(path.join(os.tmpdir(), "client-uploads-"));
  const stack = await launchStack({
    databaseUrl: database.url,
    port: 0,
    authSecret: randomBytes(32).toString("base64url"),
    dataEncryptionKey: randomBytes(32).toString("base64url"),
    env: { LOG_LEVEL: "warn", UPLOAD_DIR: uploads, ...env },
    onLine: (name, line) => {
      if (process.env.CLIENT_TEST_LOGS) console.log(name, line);
    },
  });
  return {
    stack,
    database,
    async stop() {
      await stack.stop();
      await database.drop();
      await rm(uploads, { recursive: true, force: true });
    },
  };
}

/** Grants a role straight in user_role (what `pnpm admin:grant` does). */
export async function grantRole(databaseUrl: string, userId: string, role: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query("INSERT INTO user_role (user_id, role) VALUES ($1, $2) ON CONFLICT DO NOTHING", [userId, role]);
  } finally {
    await client.end();
  }
}

/** A fresh email address. */
export function freshEmail(prefix = "client"): string {
  return `${prefix}-${randomBytes(5).toString("hex")}@example.com`;
}

/** Signs up on a stack that signs new users in (no REQUIRE_EMAIL_VERIFICATION); anything else fails the test. */
export async function signUpSignedIn(client: AppClient, body: SignUpBody): Promise<SignedIn> {
  const result = await client.auth.signUp(body);
  if (result.status !== "signed_in") throw new Error(`sign-up answered ${result.status}, expected signed_in`);
  return result;
}

/** Signs in an account without a second factor; a `two_factor` answer fails the test. */
export async function signInSignedIn(client: AppClient, body: SignInBody): Promise<SignedIn> {
  const result = await client.auth.signIn(body);
  if (result.status !== "signed_in") throw new Error(`sign-in answered ${result.status}, expected signed_in`);
  return result;
}

/** The ApiError a call rejects with (the test fails when it resolves or rejects with anything else). */
export async function rejection(call: Promise<unknown>): Promise<ApiError> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiError;
}
