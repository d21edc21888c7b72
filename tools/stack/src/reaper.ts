#!/usr/bin/env node
// `node reaper.js <dataDir> <launcherPid>`: started detached by start.ts. If the launcher dies
// without its orderly shutdown (SIGKILL, OOM kill), the services stop themselves
// (watch-parent.ts) but the embedded PostgreSQL would run on; this stops what the launcher's
// stack file still lists, services first and PostgreSQL last (stackfile.ts). A launcher that
// stops cleanly removes the file first, leaving nothing to do.
import { existsSync } from "node:fs";
import { isAlive } from "./pids.js";
import { stackFile, stopStaleStack } from "./stackfile.js";

const [dataDir, pidText] = process.argv.slice(2);
const launcher = Number(pidText);
if (!dataDir || !(launcher > 0)) {
  process.stderr.write("usage: reaper.js <dataDir> <launcherPid>\n");
  process.exit(2);
}
// The terminal's Ctrl-C and hang-up are the launcher's business, not this watcher's.
for (const s of ["SIGINT", "SIGHUP"] as const) process.on(s, () => undefined);

while (isAlive(launcher)) await new Promise((r) => setTimeout(r, 250));
if (existsSync(stackFile(dataDir))) await stopStaleStack(dataDir, () => undefined).catch(() => undefined);
