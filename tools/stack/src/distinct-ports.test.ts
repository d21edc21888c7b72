import { describe, expect, it } from "vitest";
import { distinctPorts } from "./service-ports.js";

describe("the ports of one launch", () => {
  it("never hands out a port twice, nor a reserved one, even when the source repeats itself", async () => {
    const answers = [3000, 41000, 41000, 42000, 41000, 43000];
    const next = distinctPorts(async () => answers.shift() as number, [3000, 0]);
    expect([await next(), await next(), await next()]).toEqual([41000, 42000, 43000]);
  });
});
