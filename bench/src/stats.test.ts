import { describe, expect, it } from "vitest";
import { frontendParser } from "./pg-counter.js";
import { packageOf } from "./profile.js";
import { fmt, median, pairedRatio, percentile, rotate, spread } from "./stats.js";

describe("statistics helpers", () => {
  it("takes medians of odd and even lists, ignoring non-finite values", () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([1, Number.NaN, 3])).toBe(2);
    expect(median([])).toBeNaN();
  });

  it("takes nearest-rank percentiles", () => {
    const values = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(percentile(values, 50)).toBe(50);
    expect(percentile(values, 99)).toBe(99);
    expect(percentile(values, 100)).toBe(100);
    expect(percentile([7], 99)).toBe(7);
    expect(percentile([], 50)).toBeNaN();
  });

  it("pairs ratios per round before taking the median", () => {
    // Round 2 ran while the machine was twice as slow: both sides halve, the ratio does not move.
    expect(pairedRatio([90, 45, 90], [100, 50, 100])).toBeCloseTo(0.9);
    expect(pairedRatio([1, 2], [0, 4])).toBe(0.5);
    expect(pairedRatio([], [])).toBeNaN();
  });

  it("rotates the variant order so each round starts elsewhere", () => {
    expect(rotate(["a", "b", "c"], 0)).toEqual(["a", "b", "c"]);
    expect(rotate(["a", "b", "c"], 1)).toEqual(["b", "c", "a"]);
    expect(rotate(["a", "b", "c"], 4)).toEqual(["b", "c", "a"]);
    expect(rotate([], 3)).toEqual([]);
  });

  it("reports spreads and formats numbers", () => {
    expect(spread([3, 1, 2])).toEqual({ min: 1, max: 3 });
    expect(fmt(1234.5, 1)).toBe("1,234.5");
    expect(fmt(Number.NaN)).toBe("–");
  });
});

describe("PostgreSQL frontend parser", () => {
  const message = (type: string, body = Buffer.alloc(0)) => {
    const header = Buffer.alloc(5);
    header.write(type, 0, "latin1");
    header.writeInt32BE(body.length + 4, 1);
    return Buffer.concat([header, body]);
  };
  const startup = () => {
    const body = Buffer.from("user\0postgres\0\0");
    const head = Buffer.alloc(8);
    head.writeInt32BE(body.length + 8, 0);
    head.writeInt32BE(196608, 4);
    return Buffer.concat([head, body]);
  };

  it("counts typed messages after the startup packet, across arbitrary chunk boundaries", () => {
    const stream = Buffer.concat([
      startup(),
      message("Q", Buffer.from("SELECT 1\0")),
      message("P", Buffer.from("\0SELECT $1\0\0\0")),
      message("B", Buffer.alloc(12)),
      message("E", Buffer.alloc(5)),
      message("S"),
    ]);
    for (const size of [1, 3, 7, stream.length]) {
      const seen: string[] = [];
      const parse = frontendParser((t) => seen.push(String.fromCharCode(t)));
      for (let i = 0; i < stream.length; i += size) parse(stream.subarray(i, i + size));
      expect(seen).toEqual(["Q", "P", "B", "E", "S"]);
    }
  });

  it("skips an SSLRequest before the startup packet", () => {
    const ssl = Buffer.alloc(8);
    ssl.writeInt32BE(8, 0);
    ssl.writeInt32BE(80877103, 4);
    const seen: number[] = [];
    frontendParser((t) => seen.push(t))(Buffer.concat([ssl, startup(), message("S")]));
    expect(seen).toEqual([0x53]);
  });
});

describe("profile attribution", () => {
  it("names the package a frame belongs to", () => {
    expect(packageOf("file:///r/node_modules/.pnpm/jose@6.2.17/node_modules/jose/dist/x.js", "f")).toBe("jose");
    expect(packageOf("file:///r/node_modules/.pnpm/@prisma+client@6/node_modules/@prisma/client/r.js", "f")).toBe("@prisma/client");
    expect(packageOf("node:internal/crypto/sig", "verify")).toBe("node:internal");
    expect(packageOf("file:///r/packages/auth-verify/dist/verify.js", "v")).toBe("packages/auth-verify");
    expect(packageOf("", "(garbage collector)")).toBe("(garbage collector)");
  });
});
