import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { startProcess } from "./processes.js";
import { supervise } from "./supervise.js";

const script = (code: string) => {
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), "stack-supervise-")), "service.mjs");
  writeFileSync(file, code);
  return file;
};

describe("supervise", () => {
  it("restarts a crashing service with growing delays, then gives up with a clear reason", async () => {
    const entry = script("process.exit(3);\n");
    const lines: string[] = [];
    let spawned = 0;
    const service = supervise("api-1", {
      spawn: () => {
        spawned += 1;
        return startProcess({ name: "api-1", entry, env: process.env, onLine: () => undefined });
      },
      healthy: () => new Promise(() => undefined),
      policy: { firstDelayMs: 20, maxDelayMs: 40, maxCrashes: 4, windowMs: 60_000 },
      log: (line) => lines.push(line),
    });
    const { reason } = await service.gaveUp;
    expect(reason).toBe("crashed 4 times within 60 s (last: code 3); giving up");
    expect(spawned).toBe(4);
    expect(lines).toEqual([
      "api-1 exited (code 3); restarting in 0.02 s",
      "api-1 exited (code 3); restarting in 0.04 s",
      "api-1 exited (code 3); restarting in 0.04 s",
    ]);
  });

  it("without a policy, the first exit is final", async () => {
    const service = supervise("gateway", {
      spawn: () => startProcess({ name: "gateway", entry: script("process.exit(1);\n"), env: process.env, onLine: () => undefined }),
      healthy: async () => undefined,
      policy: undefined,
    });
    expect((await service.gaveUp).reason).toBe("exited unexpectedly (code 1)");
  });
});
