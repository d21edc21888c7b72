import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";

/** Kernel clock ticks per second (utime/stime unit in /proc/<pid>/stat). */
let ticksPerSecond: number | undefined;
function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/** CPU time (user + system, all threads) a process has used so far, in milliseconds; NaN if gone. */
export function cpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name (which may contain spaces) start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const utime = Number(fields[11]);
    const stime = Number(fields[12]);
    return ((utime + stime) * 1000) / clockTicks();
  } catch {
    return Number.NaN;
  }
}

/**
 * CPU time of a process tree in ms: the process itself, its exited (reaped) children (cutime +
 * cstime) and its live children. Deltas of this are exact even when children come and go during
 * the measurement (PostgreSQL backends of pools that connect and idle out).
 */
export function cpuTreeMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
    return (ticks * 1000) / clockTicks() + cpuMsOf(childPids(pid));
  } catch {
    return Number.NaN;
  }
}

/** Sum of {@link cpuMs} over several processes. */
export function cpuMsOf(pids: readonly number[]): number {
  let total = 0;
  for (const pid of pids) {
    const ms = cpuMs(pid);
    if (Number.isFinite(ms)) total += ms;
  }
  return total;
}

/** Resident set size of a process in KiB (VmRSS), NaN if gone. */
export function rssKiB(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
    return match ? Number(match[1]) : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/** The pids whose parent is `ppid` (e.g. the backends of a postmaster). */
export function childPids(ppid: number): number[] {
  const out: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[1]) === ppid) out.push(Number(name));
    } catch {
      // exited meanwhile
    }
  }
  return out;
}

/** True when `taskset` exists and the machine has at least two cores to split server and load. */
export function canPin(cores: number): boolean {
  return cores >= 2 && existsSync("/usr/bin/taskset");
}

/** Pins every thread of a running process to one CPU (no-op when pinning is off). Returns success. */
export function pin(pid: number | undefined, cpu: number | undefined): boolean {
  if (pid === undefined || cpu === undefined) return false;
  try {
    execFileSync("taskset", ["-a", "-p", "-c", String(cpu), String(pid)], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}
