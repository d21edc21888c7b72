import { randomUUID } from "node:crypto";
import { generateKeyPair, SignJWT } from "jose";

/** A signed-up user with a live session. */
export interface SeedUser {
  id: string;
  email: string;
  password: string;
  /** `identity.session_token=<id>.<secret>` as the browser would send it. */
  cookie: string;
}

const PASSWORD = "correct horse battery staple";

/** Runs `fn` over `items` with at most `concurrency` in flight; results in input order. */
export async function mapLimit<T, R>(items: readonly T[], concurrency: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    for (;;) {
      const i = next;
      next += 1;
      if (i >= items.length) return;
      out[i] = await fn(items[i] as T, i);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, items.length)) }, worker));
  return out;
}

function sessionCookie(res: Response): string {
  const cookie = res.headers.getSetCookie().find((c) => c.includes("session_token="));
  if (!cookie) throw new Error(`no session cookie in the answer (HTTP ${res.status})`);
  return cookie.split(";")[0] as string;
}

/** Signs up `count` users directly at an identity instance; each keeps the session of its sign-up. */
export async function signUpUsers(identityUrl: string, count: number, runId: string): Promise<SeedUser[]> {
  return mapLimit(
    Array.from({ length: count }, (_, i) => i),
    4,
    async (i) => {
      const email = `bench-${runId}-${i}@example.com`;
      const res = await fetch(`${identityUrl}/api/auth/sign-up/email`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ email, password: PASSWORD, name: `Bench User ${i}` }),
      });
      if (res.status !== 200) throw new Error(`sign-up answered HTTP ${res.status}: ${(await res.text()).slice(0, 300)}`);
      const body = (await res.json()) as { user: { id: string } };
      return { id: body.user.id, email, password: PASSWORD, cookie: sessionCookie(res) };
    },
  );
}

/** One sign-in; returns the wall time in ms (and throws on anything but 200). */
export async function signIn(identityUrl: string, user: SeedUser): Promise<number> {
  const t0 = performance.now();
  const res = await fetch(`${identityUrl}/api/auth/sign-in/email`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email: user.email, password: user.password }),
  });
  await res.arrayBuffer();
  const ms = performance.now() - t0;
  if (res.status !== 200) throw new Error(`sign-in answered HTTP ${res.status}`);
  return ms;
}

/** One get-session: the JWT from `set-auth-jwt`. */
export async function getSessionToken(identityUrl: string, cookie: string): Promise<string> {
  const res = await fetch(`${identityUrl}/api/auth/get-session`, { method: "POST", headers: { cookie } });
  await res.arrayBuffer();
  const jwt = res.headers.get("set-auth-jwt");
  if (res.status !== 200 || !jwt) throw new Error(`get-session answered HTTP ${res.status} without a JWT`);
  return jwt;
}

/**
 * Issues `count` distinct valid tokens by calling get-session repeatedly on the users' sessions
 * (each call signs a new JWT: new `jti`, so a new string).
 */
export async function issueTokens(identityUrl: string, users: readonly SeedUser[], count: number): Promise<string[]> {
  const tokens = await mapLimit(
    Array.from({ length: count }, (_, i) => i),
    16,
    (i) => getSessionToken(identityUrl, (users[i % users.length] as SeedUser).cookie),
  );
  if (new Set(tokens).size !== tokens.length) throw new Error("get-session issued duplicate tokens");
  return tokens;
}

/** Creates one task per user through an API instance; returns the task ids in user order. */
export async function createTasks(apiUrl: string, tokens: readonly string[]): Promise<string[]> {
  return mapLimit(tokens, 4, async (token, i) => {
    const res = await fetch(`${apiUrl}/api/tasks`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ title: `bench task ${i}` }),
    });
    const body = (await res.json()) as { data?: { id?: string } };
    if (res.status !== 201 || !body.data?.id) throw new Error(`task create answered HTTP ${res.status}`);
    return body.data.id;
  });
}

/**
 * Well-formed EdDSA tokens for the right issuer and audience, signed by a key the service never
 * published, each naming a different random `kid`: every one is an unknown-key lookup.
 */
export async function unknownKidTokens(issuer: string, count: number): Promise<string[]> {
  const { privateKey } = await generateKeyPair("EdDSA", { crv: "Ed25519" });
  const now = Math.floor(Date.now() / 1000);
  const out: string[] = [];
  for (let i = 0; i < count; i += 1) {
    out.push(
      await new SignJWT({ name: "Nobody", email: "nobody@example.com" })
        .setProtectedHeader({ alg: "EdDSA", kid: randomUUID(), typ: "JWT" })
        .setSubject(randomUUID())
        .setIssuer(issuer)
        .setAudience(issuer)
        .setIssuedAt(now)
        .setExpirationTime(now + 3600)
        .setJti(randomUUID())
        .sign(privateKey),
    );
  }
  return out;
}

/** What a verifier makes of a token (user id, key id, claims), read without verifying: bench input only. */
export function identityOf(token: string): { userId: string; kid: string; claims: Record<string, unknown> } {
  const [header = "", payload = ""] = token.split(".");
  const decode = (segment: string) => JSON.parse(Buffer.from(segment, "base64url").toString("utf8")) as Record<string, unknown>;
  const claims = decode(payload);
  return { userId: String(claims.sub), kid: String(decode(header).kid), claims };
}
