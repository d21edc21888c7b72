import { describe, expect, it } from "vitest";
import { newId } from "./ids.js";

describe("newId (UUIDv7)", () => {
  it("is a version-7 UUID with the RFC variant", () => {
    expect(newId()).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it("sorts in creation order, within one millisecond too", () => {
    const ids = Array.from({ length: 2000 }, () => newId(1_800_000_000_000));
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    expect(newId(1_800_000_000_500) > (ids.at(-1) ?? "")).toBe(true);
  });
});
