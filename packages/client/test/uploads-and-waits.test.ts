import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { retryAfterSeconds } from "../src/errors.js";
import { ApiError, type AppClient, createClient, memoryStorage } from "../src/index.js";
import { cookieFetch, freshEmail, signUpSignedIn, startStack } from "./helpers.js";

let env: Awaited<ReturnType<typeof startStack>>;
beforeAll(async () => {
  // Two failed sign-ins per account and address, then 429 (no slow-down before it).
  env = await startStack({ RATE_LIMIT_ACCOUNT_MAX: "2", RATE_LIMIT_ACCOUNT_DELAY_AFTER: "100" });
});
afterAll(async () => {
  await env?.stop();
});

function newClient(): AppClient {
  return createClient({ baseUrl: env.stack.baseUrl, storage: memoryStorage(), fetch: cookieFetch().fetch });
}

async function caught(promise: Promise<unknown>): Promise<ApiError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof ApiError)) throw new Error(`expected an ApiError, got ${String(error)}`);
  return error;
}

describe("uploads: list again and delete", () => {
  it("lists the user's uploads newest first, deletes one; another user's id is a 404", async () => {
    const client = newClient();
    await signUpSignedIn(client, { email: freshEmail("uploads"), password: "correct horse battery", name: "Uploads" });
    const made = [];
    for (const name of ["a.txt", "b.txt", "c.txt"])
      made.push(await client.uploads.create({ blob: new Blob([name], { type: "text/plain" }), filename: name }));
    const first = await client.uploads.list({ limit: 2 });
    expect(first.items.map((u) => u.filename)).toEqual(["c.txt", "b.txt"]);
    const second = await client.uploads.list({ limit: 2, cursor: first.nextCursor ?? "" });
    expect(second.items.map((u) => u.filename)).toEqual(["a.txt"]);
    expect(second.nextCursor).toBeNull();

    const stranger = newClient();
    await signUpSignedIn(stranger, { email: freshEmail("stranger"), password: "correct horse battery", name: "Stranger" });
    expect(await caught(stranger.uploads.remove(made[0]?.id ?? ""))).toMatchObject({ status: 404, code: "not_found" });
    await client.uploads.remove(made[0]?.id ?? "");
    expect((await client.uploads.list()).items.map((u) => u.filename)).toEqual(["c.txt", "b.txt"]);
    expect(await caught(client.uploads.download(made[0]?.id ?? ""))).toMatchObject({ status: 404 });
  });
});

describe("a 429 says how long to wait", () => {
  it("carries Retry-After as retryAfter (seconds) on the ApiError", async () => {
    const email = freshEmail("limited");
    await signUpSignedIn(newClient(), { email, password: "correct horse battery", name: "Limited" });
    const client = newClient();
    for (let i = 0; i < 2; i += 1) {
      expect(await caught(client.auth.signIn({ email, password: "wrong password" }))).toMatchObject({ status: 401, retryAfter: null });
    }
    const limited = await caught(client.auth.signIn({ email, password: "wrong password" }));
    expect(limited).toMatchObject({ status: 429, code: "rate_limited" });
    expect(limited.retryAfter).toBeGreaterThan(0);
    expect(limited.retryAfter).toBeLessThanOrEqual(15 * 60);
  });

  it("reads delta-seconds and HTTP dates, and nothing else", () => {
    const now = Date.parse("2026-01-01T00:00:00Z");
    expect(retryAfterSeconds("42", now)).toBe(42);
    expect(retryAfterSeconds(" 0 ", now)).toBe(1);
    expect(retryAfterSeconds("Thu, 01 Jan 2026 00:01:30 GMT", now)).toBe(90);
    expect(retryAfterSeconds("Wed, 31 Dec 2025 23:00:00 GMT", now)).toBe(1);
    expect(retryAfterSeconds(null, now)).toBeNull();
    expect(retryAfterSeconds("", now)).toBeNull();
    expect(retryAfterSeconds("soon", now)).toBeNull();
    expect(retryAfterSeconds("-5", now)).toBeNull();
  });
});
