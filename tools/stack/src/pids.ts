import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";

/** A process that exited but was not reaped yet (its parent died and init is slow to reap). */
function isZombie(pid: number): boolean {
  try {
    // `pid (comm) S ...`: the state follows the last ")" (comm may contain spaces).
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) === "Z";
  } catch {
    return false;
  }
}

/** True while a process with this pid runs (an exited, unreaped one does not). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  return !isZombie(pid);
}

/** The command line of `pid` ("" when gone); /proc on Linux, `ps` elsewhere. */
export function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim();
  } catch {
    try {
      return execFileSync("ps", ["-o", "args=", "-p", String(pid)], { encoding: "utf8" }).trim();
    } catch {
      return "";
    }
  }
}

/** The parent pid and short name of `pid`, or undefined when it is gone. */
export function parentOf(pid: number): { ppid: number; comm: string } | undefined {
  try {
    const out = execFileSync("ps", ["-o", "ppid=,comm=", "-p", String(pid)], { encoding: "utf8" }).trim();
    const match = /^(\d+)\s+(.*)$/.exec(out);
    return match ? { ppid: Number(match[1]), comm: match[2] ?? "" } : undefined;
  } catch {
    return undefined;
  }
}

/** Resolves true once `pid` is gone, false when it is still alive after `ms`. */
export async function waitGone(pid: number, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (isAlive(pid)) {
    if (Date.now() > until) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
  return true;
}

/** Sends `signal`, ignoring a process that is already gone. */
export function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // already gone
  }
}
