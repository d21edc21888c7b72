import { readFileSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ROOT } from "./paths.js";
import { readStack } from "./stackfile.js";
import { allGone, type StartedStack, stackPort, startStack, stopSpawned, within } from "./stop-helpers.js";

// `pnpm dev`: the same base URL as `pnpm start`, the web app on Vite's dev server, and a service
// restarted when the JavaScript it runs is rebuilt (turbo watch writes it; here the test does).
const dirs: string[] = [];
let stack: StartedStack | undefined;
const server = path.join(ROOT, "apps/api/dist/server.js");
const original = readFileSync(server, "utf8");

afterAll(async () => {
  writeFileSync(server, original);
  await stopSpawned();
  for (const pid of stack?.pids() ?? []) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone
    }
  }
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

describe("pnpm dev", { timeout: 120_000 }, () => {
  it("serves the base URL and Vite's web app, and restarts the API when its code changes", async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), "stack-dev-"));
    dirs.push(dataDir);
    const webPort = await stackPort();
    stack = await startStack(dataDir, { WEB_PORT: String(webPort) }, "dev");
    const base = stack.output().match(/ready: (\S+)/)?.[1] as string;
    expect((await fetch(`${base}/api/me`)).status).toBe(401);
    const page = await (await fetch(`http://127.0.0.1:${webPort}/src/app/main.ts`)).text();
    expect(page).toContain(`"VITE_API_BASE_URL": ${JSON.stringify(base)}`); // served by Vite, pointed at the base URL

    // Let the initial `turbo watch` round settle, then change the API's code.
    await within(20_000, () => stack?.output().includes("development loop") ?? false);
    const before = readStack(dataDir)?.services["api-1"]?.pid;
    writeFileSync(server, `${original}\n// changed by tools/stack/src/dev.test.ts\n`);
    const restarted = await within(30_000, () => {
      const now = readStack(dataDir)?.services["api-1"]?.pid;
      return now !== undefined && now !== before && (stack?.output().includes("api-1 restarted and healthy") ?? false);
    });
    writeFileSync(server, original);
    expect(restarted, stack.output().slice(-2000)).toBe(true);
    expect((await fetch(`${base}/api/me`)).status).toBe(401);

    process.kill(stack.launcher(), "SIGTERM");
    expect(await within(10_000, () => (stack ? allGone(stack) : true))).toBe(true);
  });
});
