import { describe, expect, it } from "vitest";
import { type VerifiedToken, VerifiedTokenCache } from "./verified-cache.js";

const entry = (userId: string, kid = "k1"): VerifiedToken => ({ userId, kid, claims: { sub: userId } });

describe("VerifiedTokenCache", () => {
  it("serves an entry until its expiry, then forgets it", () => {
    const cache = new VerifiedTokenCache(10);
    const value = entry("u1");
    cache.set("tok-1", value, 2_000, 1_000);
    expect(cache.get("tok-1", 1_999)).toBe(value);
    expect(cache.get("tok-1", 2_000)).toBeUndefined();
    expect(cache.size).toBe(0);
    expect(cache.stats()).toMatchObject({ hits: 1, misses: 1 });
  });

  it("keys by the whole token: tokens sharing a prefix never collide", () => {
    const cache = new VerifiedTokenCache(10);
    const a = "x".repeat(5000);
    cache.set(`${a}A`, entry("a"), 10, 0);
    cache.set(`${a}B`, entry("b"), 10, 0);
    expect(cache.get(`${a}A`, 0)?.userId).toBe("a");
    expect(cache.get(`${a}B`, 0)?.userId).toBe("b");
    expect(cache.get(a, 0)).toBeUndefined();
  });

  it("respects the LRU bound and evicts the least recently used entry", () => {
    const cache = new VerifiedTokenCache(3);
    for (const t of ["t1", "t2", "t3"]) cache.set(t, entry(t), 100, 0);
    expect(cache.get("t1", 0)?.userId).toBe("t1"); // t1 becomes most recent
    cache.set("t4", entry("t4"), 100, 0);
    expect(cache.size).toBe(3);
    expect(cache.get("t2", 0)).toBeUndefined();
    expect(cache.get("t1", 0)).toBeDefined();
    expect(cache.get("t3", 0)).toBeDefined();
    expect(cache.get("t4", 0)).toBeDefined();
    for (let i = 0; i < 100; i++) cache.set(`bulk-${i}`, entry("b"), 100, 0);
    expect(cache.size).toBe(3);
    expect(cache.stats().evictions).toBe(101);
  });

  it("drops every entry of the given kids", () => {
    const cache = new VerifiedTokenCache(10);
    cache.set("a", entry("a", "k1"), 100, 0);
    cache.set("b", entry("b", "k2"), 100, 0);
    cache.set("c", entry("c", "k1"), 100, 0);
    expect(cache.dropKids(["k1"])).toBe(2);
    expect(cache.get("a", 0)).toBeUndefined();
    expect(cache.get("b", 0)?.userId).toBe("b");
    expect(cache.dropKids([])).toBe(0);
  });

  it("stores nothing when disabled (0) or already expired", () => {
    const off = new VerifiedTokenCache(0);
    off.set("a", entry("a"), 100, 0);
    expect(off.size).toBe(0);
    const on = new VerifiedTokenCache(5);
    on.set("a", entry("a"), 100, 100);
    on.set("b", entry("b"), Number.NaN, 0);
    expect(on.size).toBe(0);
  });

  it("admit: stores a token on its second sighting, not its first", () => {
    const cache = new VerifiedTokenCache(10);
    const value = entry("u1");
    expect(cache.admit("tok-1", value, 100, 0)).toBe(false);
    expect(cache.get("tok-1", 0)).toBeUndefined();
    expect(cache.admit("tok-1", value, 100, 0)).toBe(true);
    expect(cache.get("tok-1", 0)).toBe(value);
    expect(cache.stats()).toMatchObject({ size: 1, deferred: 1 });
    const fresher = entry("u1");
    expect(cache.admit("tok-1", fresher, 200, 0)).toBe(true); // held: replaced at once
    expect(cache.get("tok-1", 150)).toBe(fresher);
  });

  it("admit: a flood of one-shot tokens neither evicts nor fills", () => {
    const cache = new VerifiedTokenCache(100);
    cache.admit("kept", entry("k"), 100, 0);
    cache.admit("kept", entry("k"), 100, 0);
    for (let i = 0; i < 10_000; i++) cache.admit(`once-${i}.${"s".repeat(40)}${i}`, entry("x"), 100, 0);
    expect(cache.stats()).toMatchObject({ size: 1, evictions: 0 });
    expect(cache.stats().deferred).toBeGreaterThan(9_900);
    expect(cache.get("kept", 0)?.userId).toBe("k");
  });

  it("admit: stores nothing when disabled or expired, and clear() forgets sightings", () => {
    const off = new VerifiedTokenCache(0);
    expect(off.admit("a", entry("a"), 100, 0)).toBe(false);
    expect(off.admit("a", entry("a"), 100, 0)).toBe(false);
    expect(off.size).toBe(0);
    const on = new VerifiedTokenCache(5);
    expect(on.admit("b", entry("b"), 100, 100)).toBe(false);
    on.admit("c", entry("c"), 100, 0);
    on.clear();
    expect(on.admit("c", entry("c"), 100, 0)).toBe(false);
    expect(on.admit("c", entry("c"), 100, 0)).toBe(true);
  });

  it("rejects a bad bound", () => {
    expect(() => new VerifiedTokenCache(-1)).toThrow(TypeError);
    expect(() => new VerifiedTokenCache(1.5)).toThrow(TypeError);
  });
});
