import { isAppError } from "@app/http-kit";
import { describe, expect, it } from "vitest";
import { rateLimitRefusals } from "../metrics.js";
import { PasswordQueue } from "./password-queue.js";

/** identity_rate_limit_refusals_total by limiter: undefined when its series does not exist. */
const refusals = async (limiter: string) => (await rateLimitRefusals.get()).values.find((v) => v.labels.limiter === limiter)?.value;

/** Work that finishes when the test says so. */
function gate() {
  let open: () => void = () => undefined;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { open, work: () => opened };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe("PasswordQueue", () => {
  it("runs at most `concurrency` at once and gives free slots to the waiting clients in turn", async () => {
    const queue = new PasswordQueue({ concurrency: 1, maxQueuedPerClient: 10, maxQueued: 100 });
    const order: string[] = [];
    const first = gate();
    const running = queue.asClient("flood", () => queue.run(first.work));
    const jobs = [
      ...["f1", "f2", "f3"].map((name) => queue.asClient("flood", () => queue.run(async () => void order.push(name)))),
      queue.asClient("other", () => queue.run(async () => void order.push("o1"))),
    ];
    await settle();
    expect(queue.load).toEqual({ running: 1, queued: 4 });
    first.open();
    await Promise.all([running, ...jobs]);
    // The other client waits for one of the flood's jobs, not for all of them.
    expect(order).toEqual(["f1", "o1", "f2", "f3"]);
    expect(queue.load).toEqual({ running: 0, queued: 0 });
  });

  it("refuses a client over its share with 429 and anyone over the total with 503, both with Retry-After", async () => {
    const [clientBefore, fullBefore] = [await refusals("password-queue-client"), await refusals("password-queue-full")];
    expect([clientBefore, fullBefore], "both series exist at 0 from the start").toEqual([0, 0]);
    const queue = new PasswordQueue({ concurrency: 1, maxQueuedPerClient: 2, maxQueued: 3 });
    const first = gate();
    const held = [queue.asClient("a", () => queue.run(first.work))];
    held.push(
      queue.asClient("a", () => queue.run(first.work)),
      queue.asClient("a", () => queue.run(first.work)),
    );
    const perClient = await queue.asClient("a", () => queue.run(first.work)).catch((e: unknown) => e);
    expect(isAppError(perClient) && [perClient.code, perClient.headers?.["Retry-After"]]).toEqual(["rate_limited", "1"]);
    held.push(queue.asClient("b", () => queue.run(first.work)));
    const total = await queue.asClient("c", () => queue.run(first.work)).catch((e: unknown) => e);
    expect(isAppError(total) && [total.code, total.headers?.["Retry-After"]]).toEqual(["service_unavailable", "1"]);
    // Each refusal counts under its own limiter.
    expect([await refusals("password-queue-client"), await refusals("password-queue-full")]).toEqual([1, 1]);
    first.open();
    await Promise.all(held);
  });

  it("frees the slot of work that fails", async () => {
    const queue = new PasswordQueue({ concurrency: 1, maxQueuedPerClient: 10, maxQueued: 10 });
    await expect(queue.run(() => Promise.reject(new Error("argon2 failed")))).rejects.toThrow("argon2 failed");
    expect(await queue.run(async () => "next")).toBe("next");
    expect(queue.load).toEqual({ running: 0, queued: 0 });
  });
});
