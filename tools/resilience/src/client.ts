import { randomBytes } from "node:crypto";
import http from "node:http";
import { SET_AUTH_JWT_HEADER } from "@app/contracts";

/** A signed-up user with a session cookie and a JWT. */
export interface Account {
  email: string;
  password: string;
  /** `identity.session_token=<value>` */
  cookie: string;
  jwt: string;
  userId: string;
}

/** A JSON response with its status. */
export interface JsonAnswer<T = unknown> {
  status: number;
  body: T;
  headers: Headers;
}

/** Sends a JSON request (with a bearer when `jwt` is given) and reads the JSON answer. */
export async function call<T = unknown>(
  url: string,
  options: { method?: string; jwt?: string; cookie?: string; body?: unknown; timeoutMs?: number } = {},
): Promise<JsonAnswer<T>> {
  const headers: Record<string, string> = {};
  if (options.jwt) headers.authorization = `Bearer ${options.jwt}`;
  if (options.cookie) headers.cookie = options.cookie;
  if (options.body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(url, {
    method: options.method ?? "GET",
    headers,
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
    signal: AbortSignal.timeout(options.timeoutMs ?? 15_000),
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON: keep the text
  }
  return { status: res.status, body: body as T, headers: res.headers };
}

/** The `name=value` of the session cookie a response set. */
export function sessionCookieOf(res: { headers: Headers }): string {
  const line = res.headers.getSetCookie().find((c) => c.startsWith("identity.session_token="));
  if (!line) throw new Error("no session cookie in the response");
  return line.split(";")[0] ?? "";
}

/** get-session with a cookie: the JWT (throws unless 200). */
export async function jwtFor(identityUrl: string, cookie: string): Promise<string> {
  const res = await call(`${identityUrl}/api/auth/get-session`, { method: "POST", cookie });
  const jwt = res.headers.get(SET_AUTH_JWT_HEADER);
  if (res.status !== 200 || !jwt) throw new Error(`get-session answered ${res.status}`);
  return jwt;
}

/** Signs a new user up at `identityUrl` (an identity process or the gateway) and fetches a JWT. */
export async function signUp(identityUrl: string, name = "Resilience"): Promise<Account> {
  const email = `r-${randomBytes(6).toString("hex")}@example.com`;
  const password = `pw-${randomBytes(9).toString("base64url")}`;
  const res = await call<{ user: { id: string } }>(`${identityUrl}/api/auth/sign-up/email`, {
    method: "POST",
    body: { email, password, name },
  });
  if (res.status !== 200) throw new Error(`sign-up answered ${res.status}: ${JSON.stringify(res.body)}`);
  const cookie = sessionCookieOf(res);
  return { email, password, cookie, jwt: await jwtFor(identityUrl, cookie), userId: res.body.user.id };
}

/** Signs in (the password of `account`) and returns the new session cookie. */
export async function signIn(identityUrl: string, account: Pick<Account, "email" | "password">): Promise<JsonAnswer & { cookie?: string }> {
  const res = await call(`${identityUrl}/api/auth/sign-in/email`, {
    method: "POST",
    body: { email: account.email, password: account.password },
  });
  return res.status === 200 ? { ...res, cookie: sessionCookieOf(res) } : res;
}

/** Polls `check` every `everyMs` until it returns a truthy value or `timeoutMs` passes. */
export async function waitFor<T>(what: string, check: () => Promise<T>, timeoutMs = 20_000, everyMs = 100): Promise<NonNullable<T>> {
  const until = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value;
      last = value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > until) throw new Error(`timed out waiting for ${what} (last: ${String(last)})`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Random bytes as base64url, for secrets. */
export const secret = (bytes = 32) => randomBytes(bytes).toString("base64url");

/** A GET with header pairs exactly as given (a repeated name is sent as two header lines). */
export function rawGet(url: string, pairs: Array<[string, string]>): Promise<{ status: number; body: string }> {
  const flat = ["host", new URL(url).host, ...pairs.flat()];
  return new Promise((resolve, reject) => {
    const req = http.request(url, { headers: flat, agent: false }, (res) => {
      let body = "";
      res.on("data", (c: Buffer) => {
        body += c.toString();
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end();
  });
}
