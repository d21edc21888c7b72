import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { commandLine, isAlive } from "./pids.js";
import { allGone, kill, type StartedStack, startStack, stopSpawned, within } from "./stop-helpers.js";

// Every way a developer, an IDE, a supervisor or `timeout` stops `pnpm start` stops the whole
// stack (launcher, services, embedded PostgreSQL) and frees its ports within 10 s; a clean stop
// leaves pnpm nothing to call a failure (no `ELIFECYCLE Command failed`).
let dataDir: string;
const started: StartedStack[] = [];

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), "stack-stop-"));
});
afterAll(async () => {
  await stopSpawned();
  for (const s of started) for (const pid of s.pids()) kill(pid, "SIGKILL");
  await rm(dataDir, { recursive: true, force: true });
});

async function run(stop: (s: StartedStack) => void) {
  const stack = await startStack(dataDir);
  started.push(stack);
  stop(stack);
  const gone = await within(10_000, () => allGone(stack));
  const alive = stack
    .pids()
    .filter(isAlive)
    .map((pid) => `${pid} ${commandLine(pid)}`);
  expect(gone, `alive: ${alive.join("; ")}\n${stack.output()}`).toBe(true);
  return stack;
}

describe("stopping pnpm start", { timeout: 90_000 }, () => {
  it.each(["SIGINT", "SIGTERM"] as const)("%s to the pnpm pid stops everything; pnpm reports no failure", async (signal) => {
    const stack = await run((s) => kill(s.pnpm.pid as number, signal));
    expect(await stack.exited).toEqual({ code: 0, signal: null });
    expect(stack.output()).toContain("stack    | stopped");
    expect(stack.output()).not.toContain("ELIFECYCLE");
  });

  it("SIGHUP to the pnpm pid (pnpm dies of it) stops everything", async () => {
    const stack = await run((s) => kill(s.pnpm.pid as number, "SIGHUP"));
    await within(5_000, () => stack.output().includes("stack    | stopped"));
    expect(stack.output()).toContain("stack    | stopped");
  });

  it.each(["SIGINT", "SIGTERM", "SIGHUP"] as const)("%s to the launcher stops everything", async (signal) => {
    const stack = await run((s) => kill(s.launcher(), signal));
    expect(await stack.exited).toEqual({ code: 0, signal: null });
    expect(stack.output()).not.toContain("ELIFECYCLE");
  });

  it("Ctrl-C in a terminal (SIGINT to the whole foreground process group) stops everything, exit 0", async () => {
    const stack = await run((s) => kill(-(s.pnpm.pid as number), "SIGINT"));
    expect(await stack.exited).toEqual({ code: 0, signal: null });
    expect(stack.output()).not.toContain("ELIFECYCLE");
  });

  it("the parent dying (SIGKILL of pnpm) stops everything", async () => {
    const stack = await run((s) => kill(s.pnpm.pid as number, "SIGKILL"));
    expect(stack.output()).not.toContain("failed to start");
  });

  it("a SIGKILLed launcher leaves nothing behind: services stop themselves, the reaper stops PostgreSQL", async () => {
    await run((s) => kill(s.launcher(), "SIGKILL"));
  });
});
