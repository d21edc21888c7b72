import { WEBHOOK_EVENT_TYPES, type WebhookDeliveryView } from "@app/contracts";
import { describe, expect, it } from "vitest";
import { deliveryPill, deliveryWords, EVENT_WORDS } from "./admin-webhooks.js";

const delivery = (overrides: Partial<WebhookDeliveryView>): WebhookDeliveryView => ({
  id: "dlv_1",
  messageId: "msg_1",
  eventType: "user.created",
  state: "pending",
  attempts: 0,
  lastStatus: null,
  lastError: null,
  lastAttemptAt: null,
  nextAttemptAt: null,
  deliveredAt: null,
  createdAt: "2026-11-26T10:00:00.000Z",
  ...overrides,
});

describe("the webhooks page's words", () => {
  it("describes every event the service sends", () => {
    expect(Object.keys(EVENT_WORDS).sort()).toEqual([...WEBHOOK_EVENT_TYPES].sort());
  });

  it("says where a delivery is: waiting, retrying with the last reason, delivered, failed", () => {
    expect(deliveryWords(delivery({}))).toBe("Waiting for its first attempt.");
    const retrying = deliveryWords(
      delivery({ attempts: 2, lastError: "the endpoint answered 503", nextAttemptAt: "2026-11-26T10:05:00.000Z" }),
    );
    expect(retrying).toMatch(/^Trying again .+ \(2 attempts so far\)\. Last: the endpoint answered 503\.$/);
    expect(deliveryWords(delivery({ state: "succeeded", attempts: 1, deliveredAt: "2026-11-26T10:00:01.000Z" }))).toMatch(
      /^Delivered .+ after 1 attempt\.$/,
    );
    expect(deliveryWords(delivery({ state: "failed", attempts: 14, lastError: "the connection was refused" }))).toBe(
      "Failed after 14 attempts; no more automatic retries. Last: the connection was refused.",
    );
    expect(deliveryWords(delivery({ state: "sending", attempts: 3 }))).toBe("Being sent now (3 attempts before).");
  });

  it("marks only failed deliveries as a danger", () => {
    expect(deliveryPill("failed")).toEqual({ text: "failed", danger: true });
    for (const state of ["pending", "sending", "succeeded"] as const) expect(deliveryPill(state).danger).toBe(false);
  });
});
