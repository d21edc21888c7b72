import { spawnSync } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "./paths.js";

describe("pnpm test's runner (dist/test.js)", () => {
  it("fails fast under CI=true when REDIS_URL is unset, instead of skipping the Redis suites", () => {
    const env: NodeJS.ProcessEnv = { ...process.env, CI: "true" };
    delete env.REDIS_URL;
    const run = spawnSync(process.execPath, [path.join(ROOT, "tools/stack/dist/test.js")], { env, encoding: "utf8", timeout: 30_000 });
    expect(run.status).toBe(1);
    expect(run.stdout).toContain("REDIS_URL is not set");
  });
});
