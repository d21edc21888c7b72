import { afterAll, afterEach, beforeAll, describe, expect, it, type RunnerTask, vi } from "vitest";
import { redactedRedisUrl, testRedis } from "./redis.js";

// Port 1 refuses connections on the test machines: a Redis that does not answer.
const UNREACHABLE = "redis://:hunter2@127.0.0.1:1";

describe("testRedis (the one gate of the Redis tests)", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("under CI=true fails when Redis does not answer, naming the URL (password hidden) and the way out", async () => {
    const failure = testRedis({ env: { CI: "true", REDIS_URL: UNREACHABLE }, timeoutMs: 300 });
    await expect(failure).rejects.toThrow(/^Redis at redis:\/\/:\*\*\*@127\.0\.0\.1:1 did not answer PING \(.+\)\. CI=true requires/);
    await expect(failure).rejects.toThrow(/start Redis or point REDIS_URL at one/);
    await expect(failure).rejects.not.toThrow(/hunter2/);
  });

  it("elsewhere resolves to a skip whose reason is printed", async () => {
    const stderr = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    const redis = await testRedis({ env: { REDIS_URL: UNREACHABLE }, timeoutMs: 300 });
    expect(redis.url).toBe(UNREACHABLE);
    expect(redis.skipReason).toMatch(/^Redis at redis:\/\/:\*\*\*@127\.0\.0\.1:1 did not answer PING/);
    expect(stderr.mock.calls.map(([line]) => String(line)).join("")).toContain(`${redis.skipReason}: its tests are skipped`);
  });

  it("probes the CI machines' Redis when REDIS_URL is unset or empty", async () => {
    vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    for (const env of [{}, { REDIS_URL: "" }]) {
      const redis = await testRedis({ env, timeoutMs: 300 });
      expect(redis.url).toBe("redis://127.0.0.1:6379");
    }
  });

  it("hides only the password of a URL", () => {
    expect(redactedRedisUrl("rediss://user:secret@cache:6380/2")).toBe("rediss://user:***@cache:6380/2");
    expect(redactedRedisUrl("redis://127.0.0.1:6379")).toBe("redis://127.0.0.1:6379");
  });
});

// The gate itself, collected against a Redis that does not answer (not under CI=true, where it
// would fail this file): what it guards never runs, and each skip carries the reason.
const down = await testRedis({ env: { REDIS_URL: UNREACHABLE }, timeoutMs: 300 });

describe("a gate whose Redis does not answer", () => {
  down.it("skips a test", () => {
    throw new Error("a test behind a silent Redis ran");
  });
  down.describe("skips a block", () => {
    beforeAll(() => {
      throw new Error("a hook behind a silent Redis ran");
    });
    it("and its tests", () => {
      throw new Error("a test behind a silent Redis ran");
    });
  });

  // biome-ignore lint/correctness/noEmptyPattern: vitest reads the hook's first parameter as its fixtures, the suite comes second
  afterAll(({}, suite) => {
    const all = (task: RunnerTask): RunnerTask[] => ("tasks" in task ? task.tasks.flatMap(all) : [task]);
    const outcomes = all(suite).map((task) => ({
      name: task.name,
      state: task.result?.state ?? task.mode,
      note: (task.result as { note?: string } | undefined)?.note,
    }));
    expect(outcomes).toEqual([
      { name: "skips a test", state: "skip", note: down.skipReason },
      { name: "Redis answers", state: "skip", note: down.skipReason },
      { name: "and its tests", state: "skip", note: undefined },
    ]);
  });
});
