import { describe, expect, it } from "vitest";
import { testConfig } from "../src/config.js";
import { boundedData, MAX_WEBHOOK_PAYLOAD_BYTES } from "../src/webhooks/outbox.js";
import { nextAttemptAt, retryDelayMs } from "../src/webhooks/schedule.js";
import { SECRET } from "./kit.js";

// The retry schedule with the production defaults, and the payload bound, as pure functions.

const defaults = testConfig({ DATABASE_URL: "postgresql://unused/x", AUTH_SECRET: SECRET }).webhooks;
const SECOND = 1000;
const HOUR = 3600 * SECOND;

describe("the retry schedule", () => {
  it("defaults to exponential backoff from 30 s, doubling up to 4 h", () => {
    expect([defaults.retryBaseMs, defaults.retryMaxMs, defaults.retryWindowMs]).toEqual([30 * SECOND, 4 * HOUR, 24 * HOUR]);
    const full = () => 0;
    expect(Array.from({ length: 11 }, (_, i) => retryDelayMs(defaults, i + 1, full) / SECOND)).toEqual([
      30, 60, 120, 240, 480, 960, 1920, 3840, 7680, 14400, 14400,
    ]);
    // The random part only shortens a wait, by at most a fifth.
    for (let attempts = 1; attempts < 20; attempts++) {
      const shortest = retryDelayMs(defaults, attempts, () => 1);
      expect(shortest).toBeGreaterThanOrEqual(0.8 * retryDelayMs(defaults, attempts, full));
    }
  });

  it("keeps retrying for 24 hours after the event, about 14 attempts, then stops", () => {
    const eventAt = new Date(Date.UTC(2026, 10, 26, 0, 0, 0));
    for (const random of [() => 0, () => 1, Math.random]) {
      let now = eventAt;
      let attempts = 1;
      for (;;) {
        const next = nextAttemptAt(defaults, attempts, eventAt, now, random);
        if (!next) break;
        now = next;
        attempts += 1;
      }
      expect(now.getTime() - eventAt.getTime()).toBeLessThanOrEqual(24 * HOUR);
      expect(now.getTime() - eventAt.getTime()).toBeGreaterThan(20 * HOUR);
      expect(attempts).toBeGreaterThanOrEqual(13);
      expect(attempts).toBeLessThanOrEqual(16);
    }
  });

  it("takes short delays from the configuration (as tests use them)", () => {
    const fast = testConfig({
      DATABASE_URL: "postgresql://unused/x",
      AUTH_SECRET: SECRET,
      WEBHOOK_RETRY_BASE_MS: "200",
      WEBHOOK_RETRY_MAX_MS: "800",
      WEBHOOK_RETRY_WINDOW_MS: "5000",
    }).webhooks;
    expect([1, 2, 3, 4].map((attempts) => retryDelayMs(fast, attempts, () => 0))).toEqual([200, 400, 800, 800]);
    const eventAt = new Date();
    expect(nextAttemptAt(fast, 9, eventAt, new Date(eventAt.getTime() + 4_500), () => 0)).toBeUndefined();
  });
});

describe("the payload bound", () => {
  it("keeps data as it is up to the bound, and past it the short fields with truncated: true", () => {
    const small = { id: "u1", email: "ann@example.com", name: "Ann" };
    expect(boundedData(small)).toBe(small);
    const huge = { id: "u1", emailVerified: true, count: 3, image: "x".repeat(MAX_WEBHOOK_PAYLOAD_BYTES), tags: ["a"] };
    expect(boundedData(huge)).toEqual({ id: "u1", emailVerified: true, count: 3, truncated: true });
  });
});
