import { describe, expect, it } from "vitest";
import { KEY_SET_EVENT_MAX_KIDS, keySetEventSchema } from "./key-set-events.js";

describe("key set events", () => {
  it("bounds a key set event: known event names, kids only", () => {
    expect(keySetEventSchema.parse({ event: "rotated", kids: ["k1"] })).toEqual({ event: "rotated", kids: ["k1"] });
    expect(keySetEventSchema.safeParse({ event: "deleted", kids: [] }).success).toBe(false);
    expect(keySetEventSchema.safeParse({ event: "created", kids: Array(KEY_SET_EVENT_MAX_KIDS + 1).fill("k") }).success).toBe(false);
  });
});
