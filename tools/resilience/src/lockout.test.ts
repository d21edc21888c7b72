import { createTestDatabase, type TestDatabase } from "@app/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Account, secret, signUp } from "./client.js";
import { type Cluster, startCluster } from "./cluster.js";

// Targeted lockout against a real identity process with its default limits
// (apps/identity/src/middleware/rate-limits.ts): an attacker's wrong passwords lock the attacker's
// (account, address) pair with 429 + Retry-After, while the account itself only gets a capped
// delay, so its owner signs in from another address within a few seconds. Loads are bounded:
// 50 attempts from one address, then 30 addresses with one attempt each.
const ATTACKER = "203.0.113.66";
const OWNER = "198.51.100.7";
/** RATE_LIMIT_ACCOUNT_MAX and RATE_LIMIT_ACCOUNT_DELAY_MAX_MS defaults. */
const PAIR_MAX = 10;
const DELAY_MAX_MS = 4_000;

let database: TestDatabase;
let cluster: Cluster;
let identityUrl: string;
let owner: Account;
const statuses: number[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  cluster = await startCluster({ databaseUrl: database.url, authSecret: secret(), dataEncryptionKey: secret(), apis: 0 });
  identityUrl = cluster.identities[0]?.url ?? "";
  owner = await signUp(identityUrl);
}, 90_000);
afterAll(async () => {
  await cluster?.stop();
  await database?.drop();
});

/** A sign-in from `ip` (identity trusts X-Forwarded-For from loopback, as behind the gateway). */
async function signInFrom(ip: string, password: string): Promise<{ status: number; retryAfter: string | null; ms: number }> {
  const started = performance.now();
  const res = await fetch(`${identityUrl}/api/auth/sign-in/email`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-forwarded-for": ip },
    body: JSON.stringify({ email: owner.email, password }),
    signal: AbortSignal.timeout(30_000),
  });
  await res.arrayBuffer();
  statuses.push(res.status);
  return { status: res.status, retryAfter: res.headers.get("retry-after"), ms: performance.now() - started };
}

/** `count` attempts, `width` at a time. */
async function attempts<T>(count: number, width: number, attempt: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (let start = 0; start < count; start += width) {
    out.push(...(await Promise.all(Array.from({ length: Math.min(width, count - start) }, (_, j) => attempt(start + j)))));
  }
  return out;
}

function tally(list: { status: number }[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const r of list) counts[r.status] = (counts[r.status] ?? 0) + 1;
  return counts;
}

describe("targeted lockout (one identity process, default limits)", () => {
  it("50 wrong passwords from one address: that address gets 429 with Retry-After, the owner signs in elsewhere within 10 s", async () => {
    const started = performance.now();
    const results = await attempts(50, 10, (i) => signInFrom(ATTACKER, `wrong-${i}`));
    const counts = tally(results);
    process.stdout.write(
      `lockout: 50 guesses from one address in ${Math.round(performance.now() - started)} ms: ${JSON.stringify(counts)}\n`,
    );
    expect(counts).toEqual({ 401: PAIR_MAX, 429: 50 - PAIR_MAX });
    for (const r of results.filter((x) => x.status === 429)) expect(Number(r.retryAfter)).toBeGreaterThanOrEqual(1);
    // Locked for the attacker even with the right password...
    expect((await signInFrom(ATTACKER, owner.password)).status).toBe(429);
    // ...while the owner, from another address, gets in after at most the capped delay.
    const own = await signInFrom(OWNER, owner.password);
    process.stdout.write(`lockout: the owner's sign-in from another address took ${Math.round(own.ms)} ms\n`);
    expect(own.status).toBe(200);
    expect(own.ms).toBeLessThan(10_000);
  }, 120_000);

  it("one failure from each of 30 addresses: slowed (capped), never locked; the owner signs in within 10 s; no 5xx", async () => {
    const results = await attempts(30, 10, (i) => signInFrom(`10.66.0.${i + 1}`, `guess-${i}`));
    expect(tally(results)).toEqual({ 401: 30 });
    expect(Math.max(...results.map((r) => r.ms))).toBeLessThan(DELAY_MAX_MS + 6_000);
    const own = await signInFrom("198.51.100.8", owner.password);
    process.stdout.write(`lockout: after 30 addresses failed, the owner's sign-in took ${Math.round(own.ms)} ms\n`);
    expect(own.status).toBe(200);
    expect(own.ms).toBeLessThan(10_000);
    expect(statuses.filter((s) => s >= 500)).toEqual([]);
  }, 120_000);
});
