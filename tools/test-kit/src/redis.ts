import { createClient } from "@redis/client";
import { describe, it } from "vitest";

/** Where CI machines run Redis (REDIS_URL names another one). */
export const DEFAULT_REDIS_URL = "redis://127.0.0.1:6379";

/** The Redis a test file runs against, probed once when the file loads. */
export interface TestRedis {
  /** REDIS_URL, else {@link DEFAULT_REDIS_URL}. */
  readonly url: string;
  /** Why the Redis tests of this file are skipped; undefined when Redis answered. */
  readonly skipReason: string | undefined;
  /** `describe(name, body)` when Redis answered; otherwise its tests are listed as skipped and the reason is shown. */
  describe(name: string, body: (url: string) => void): void;
  /** `it(name, fn)` when Redis answered; otherwise the test is skipped with the reason as its note. */
  it(name: string, fn: (url: string) => Promise<void> | void, timeout?: number): void;
}

export interface TestRedisOptions {
  /** The environment read for REDIS_URL and CI (process.env by default). */
  env?: NodeJS.ProcessEnv;
  /** How long Redis has to answer PING, retries included. */
  timeoutMs?: number;
}

/** The URL with its password hidden: a message may end up in a CI log. */
export function redactedRedisUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return "(an unparsable REDIS_URL)";
  }
}

async function pingOnce(url: string, timeoutMs: number): Promise<void> {
  const client = createClient({ url, socket: { connectTimeout: timeoutMs, reconnectStrategy: false } });
  // Connection errors reject connect() below; the listener only keeps them from being unhandled.
  client.on("error", () => undefined);
  try {
    await client.connect();
    const pong = await client.ping();
    if (pong !== "PONG") throw new Error(`PING answered ${String(pong)}`);
  } finally {
    client.destroy();
  }
}

/**
 * Resolves once Redis answers PING, polling until `timeoutMs` has passed (CI may start Redis
 * beside the tests); returns the last error's message when it never does.
 */
export async function pingRedis(url: string, timeoutMs: number): Promise<string | undefined> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const left = until - Date.now();
    const failure = await pingOnce(url, Math.max(left, 100)).then(
      () => undefined,
      (error: unknown) => (error instanceof Error ? error.message : String(error)) || "no answer",
    );
    if (failure === undefined || Date.now() + 100 >= until) return failure;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * The one gate of every test that needs Redis. Under CI=true a Redis that does not answer fails
 * the file (a CI run must never pass with its Redis tests unrun); elsewhere those tests are
 * skipped, with the reason printed once and carried as the note of each skip.
 */
export async function testRedis(options: TestRedisOptions = {}): Promise<TestRedis> {
  const env = options.env ?? process.env;
  const url = env.REDIS_URL || DEFAULT_REDIS_URL;
  const failure = await pingRedis(url, options.timeoutMs ?? 2_000);
  if (failure === undefined) return gate(url, undefined);
  const reason = `Redis at ${redactedRedisUrl(url)} did not answer PING (${failure})`;
  if (env.CI === "true") {
    throw new Error(`${reason}. CI=true requires the Redis tests to run: start Redis or point REDIS_URL at one.`);
  }
  process.stderr.write(`[test-kit] ${reason}: its tests are skipped (under CI=true they fail).\n`);
  return gate(url, reason);
}

function gate(url: string, skipReason: string | undefined): TestRedis {
  return {
    url,
    skipReason,
    describe(name, body) {
      if (skipReason === undefined) {
        describe(name, () => body(url));
        return;
      }
      describe(name, () => {
        it("Redis answers", (context) => context.skip(skipReason));
        // Collected but not run: the report still lists which tests did not run.
        describe.skip("needs Redis", () => body(url));
      });
    },
    it(name, fn, timeout) {
      it(
        name,
        async (context) => {
          if (skipReason !== undefined) context.skip(skipReason);
          await fn(url);
        },
        timeout,
      );
    },
  };
}
