import { describe, expect, it } from "vitest";
import { backoffDelay, createClient, type FetchLike, memoryStorage } from "../src/index.js";

describe("backoffDelay", () => {
  it("doubles from initialMs up to maxMs, with the jitter between half and the whole step", () => {
    const low = (attempt: number) => backoffDelay(attempt, { initialMs: 100, maxMs: 1_000, random: () => 0 });
    const high = (attempt: number) => backoffDelay(attempt, { initialMs: 100, maxMs: 1_000, random: () => 0.999_999 });
    expect([0, 1, 2, 3, 4, 5, 40].map(low)).toEqual([50, 100, 200, 400, 500, 500, 500]);
    expect([0, 1, 2, 3, 4, 5, 40].map(high)).toEqual([100, 200, 400, 800, 1_000, 1_000, 1_000]);
  });

  it("spreads clients apart: different random draws give different delays", () => {
    const delays = [0.1, 0.5, 0.9].map((r) => backoffDelay(3, { initialMs: 100, maxMs: 10_000, random: () => r }));
    expect(new Set(delays).size).toBe(3);
    expect(delays.every((d) => d >= 400 && d <= 800)).toBe(true);
  });

  it("uses the defaults (500 ms, capped at 30 s) and never goes negative", () => {
    expect(backoffDelay(0, { random: () => 0 })).toBe(250);
    expect(backoffDelay(100, { random: () => 0.999_999 })).toBe(30_000);
    expect(backoffDelay(-3, { initialMs: -5, random: () => 0.5 })).toBe(0);
  });
});

describe("task stream reconnect delays", () => {
  it("grow with the same capped backoff while the service is unreachable, and start over once it answers", async () => {
    let calls = 0;
    const body = (id: string) =>
      `id: ${id}\nevent: message.created\ndata: ${JSON.stringify({ id, taskId: "t1", type: "message.created", data: {}, createdAt: "x" })}\n\n`;
    const fetch: FetchLike = async () => {
      calls += 1;
      if (calls <= 4 || calls === 6) throw new TypeError("fetch failed");
      if (calls === 5) return new Response(body("1"), { headers: { "content-type": "text/event-stream" } });
      return new Response(JSON.stringify({ ok: false, error: { code: "not_found", message: "gone" } }), { status: 404 });
    };
    const client = createClient({ baseUrl: "http://svc.test", storage: memoryStorage({ authToken: "j" }), fetch });
    const delays: number[] = [];
    const stream = client.tasks.stream("t1", {
      onEvent: () => undefined,
      retryMs: 2,
      backoff: { maxMs: 8, random: () => 0.999_999 },
      onRetry: (_attempt, delay) => delays.push(delay),
    });
    expect(await stream.done).toMatchObject({ status: 404 });
    // 4 failures: 2, 4, 8, 8 (capped); the 5th call opens (reset), ends: 2; the 6th fails: 4.
    expect(delays).toEqual([2, 4, 8, 8, 2, 4]);
  });
});
