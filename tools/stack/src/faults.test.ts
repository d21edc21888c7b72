import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT } from "./paths.js";
import { commandLine, isAlive } from "./pids.js";
import { isPortFree } from "./ports.js";
import { readStack } from "./stackfile.js";
import { allGone, kill, type StartedStack, stackPort, startStack, stopSpawned, within } from "./stop-helpers.js";

// `pnpm start` under faults: a taken port, a crashed service, a stack left by a SIGKILLed launcher.
let dataDir: string;
const started: StartedStack[] = [];

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), "stack-faults-"));
});
afterAll(async () => {
  await stopSpawned();
  for (const s of started) for (const pid of s.pids()) kill(pid, "SIGKILL");
  await rm(dataDir, { recursive: true, force: true });
});

async function start(extra: Record<string, string> = {}) {
  const stack = await startStack(dataDir, extra);
  started.push(stack);
  return stack;
}

/** `pnpm start` expected to refuse: its exit code and output. */
async function refused(env: Record<string, string>) {
  const child = spawn("pnpm", ["start"], {
    cwd: ROOT,
    env: { ...process.env, WEB_PORT: "off", STACK_BUILD: "off", STACK_DATA_DIR: dataDir, DATABASE_URL: "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  for (const stream of [child.stdout, child.stderr]) stream.on("data", (d: Buffer) => (output += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  return { code, output };
}

describe("the ports these tests start stacks on", () => {
  it("lie below the kernel's ephemeral range, where no listen(0) or outgoing connection of a parallel test takes them", async () => {
    const ephemeral = Number.parseInt(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8"), 10);
    for (let i = 0; i < 20; i += 1) {
      const port = await stackPort();
      expect(port).toBeLessThan(ephemeral);
      expect(await isPortFree(port)).toBe(true);
    }
  });
});

describe("pnpm start under faults", { timeout: 120_000 }, () => {
  it.each([
    ["PORT", "the base URL"],
    ["EMBEDDED_PG_PORT", "the embedded PostgreSQL"],
  ])("a taken %s is named, with the variable that changes it, before anything starts", async (variable, role) => {
    const holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen(0, resolve));
    const taken = (holder.address() as net.AddressInfo).port;
    try {
      const ports = { PORT: String(await stackPort()), EMBEDDED_PG_PORT: String(await stackPort()), [variable]: String(taken) };
      const run = await refused(ports);
      expect(run.code).toBe(1);
      expect(run.output).toContain(`port ${taken} (${role}) is already in use`);
      expect(run.output).toContain(`${variable}=${taken + 1} pnpm start`);
      expect(run.output).not.toMatch(/\n\s+at /); // no stack trace
      expect(readStack(dataDir)).toBeUndefined();
    } finally {
      holder.close();
    }
  });

  it("a crashed API is restarted and the base URL serves it again; identity never stops", async () => {
    const stack = await start();
    const before = readStack(dataDir);
    const api = before?.services["api-1"]?.pid as number;
    const identity = before?.services["identity-1"]?.pid as number;
    const base = stack.output().match(/ready: (\S+)/)?.[1] as string;
    kill(api, "SIGKILL");
    const serving = await within(15_000, async () => {
      const res = await fetch(`${base}/api/me`).catch(() => undefined);
      return res?.status === 401; // the API's own answer; the gateway says 502/503 while it is down
    });
    expect(serving, stack.output()).toBe(true);
    expect(stack.output()).toMatch(/api-1 exited \(signal SIGKILL\); restarting in 0.5 s/);
    const after = readStack(dataDir);
    expect(after?.services["api-1"]?.pid).not.toBe(api);
    expect(after?.services["identity-1"]?.pid).toBe(identity);
    expect(isAlive(identity)).toBe(true);
    kill(stack.launcher(), "SIGTERM");
    expect(await within(10_000, () => allGone(stack))).toBe(true);
  });

  it("after a SIGKILLed launcher and reaper, the next start refuses while PostgreSQL has foreign clients, then cleans up and starts", async () => {
    const first = await start();
    const record = readStack(dataDir);
    const pgPort = Number(record?.ports.EMBEDDED_PG_PORT);
    kill(record?.reaper?.pid as number, "SIGKILL");
    kill(first.launcher(), "SIGKILL");
    // The services stop themselves (watch-parent.ts); PostgreSQL is left running.
    const services = Object.values(record?.services ?? {}).map((s) => s.pid);
    const stopped = await within(15_000, () => !services.some(isAlive));
    expect(
      stopped,
      `alive: ${services.filter(isAlive).map(
        (p) =>
          `${p} ${commandLine(p)} ${readFileSync(`/proc/${p}/status`, "utf8")
            .split("\n")
            .filter((l) => /^(State|PPid|Sig)/.test(l))
            .join(" ")}`,
      )}`,
    ).toBe(true);
    const postgres = first.pids().at(-1) as number;
    expect(isAlive(postgres)).toBe(true);

    const foreign = new pg.Client({
      connectionString: `postgresql://postgres:postgres@127.0.0.1:${pgPort}/postgres`,
      application_name: "psql",
    });
    await foreign.connect();
    const ports = { PORT: String(await stackPort()), EMBEDDED_PG_PORT: String(pgPort) };
    const blocked = await refused(ports);
    expect(blocked.code).toBe(1);
    expect(blocked.output).toMatch(/still has 1 client\(s\) that are not this stack's: psql on postgres/);
    expect(isAlive(postgres)).toBe(true);
    await foreign.end();

    const second = await start({ EMBEDDED_PG_PORT: String(pgPort) });
    expect(second.output()).toContain(`stopping the embedded PostgreSQL left running (pid ${postgres}, port ${pgPort})`);
    expect(isAlive(postgres)).toBe(false);
    kill(second.launcher(), "SIGTERM");
    expect(await within(10_000, () => allGone(second))).toBe(true);
  });
});
