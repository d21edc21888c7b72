import { randomUUID } from "node:crypto";
import { Writable } from "node:stream";
import { createLogger, isAppError } from "@app/http-kit";
import { describe, expect, it } from "vitest";
import { rateLimitRefusals } from "../metrics.js";
import { UserRates } from "./user-rates.js";

// The in-process count of the per-user rates (the Redis count is exercised through the MCP
// server in test/mcp-server-limits.test.ts) and its refusals in api_rate_limit_refusals_total.

const logger = createLogger({ name: "rates-test", level: "info", destination: new Writable({ write: (_c, _e, cb) => cb() }) });
const refusals = async () => (await rateLimitRefusals.get()).values.find((v) => v.labels.limiter === "mcp-tool-calls")?.value;

describe("per-user rates in process", () => {
  it("refuses takes beyond the window's limit with 429 and counts each refusal under its limiter, 0 from the start", async () => {
    const before = await refusals();
    expect(before).toBeGreaterThanOrEqual(0);
    let now = 1_000_000;
    const rates = new UserRates({ limits: { mcpToolCalls: { max: 2, windowMs: 60_000 } }, logger, now: () => now });
    const user = randomUUID();
    expect(await rates.take("mcpToolCalls", user, 2)).toEqual({ remaining: 0 });
    const refused = await rates.take("mcpToolCalls", user).catch((error: unknown) => error);
    expect(isAppError(refused) && [refused.status, refused.code, refused.headers?.["Retry-After"]]).toEqual([429, "rate_limited", "60"]);
    expect(await refusals()).toBe((before ?? 0) + 1);
    // Another user has a rate of their own; past the window the user has theirs back. Neither counts.
    await rates.take("mcpToolCalls", randomUUID());
    now += 60_001;
    await rates.take("mcpToolCalls", user);
    expect(await refusals()).toBe((before ?? 0) + 1);
  });
});
