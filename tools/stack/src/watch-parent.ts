// Preloaded into every service the launcher spawns (`node --import .../watch-parent.js`, see
// processes.ts). A service whose launcher died without stopping it (SIGKILL, crash) is reparented;
// it then stops itself the orderly way (its own SIGTERM handler) instead of holding its port and
// its database connections forever. Its output pipe died with the launcher, and a shutdown can
// stall on it inside the process (pino flushes stdout synchronously at exit), where no timer of
// this process would run any more: so the last resort is a separate process that SIGKILLs this one
// after a grace period.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";

const parent = process.ppid;
const GRACE_MS = 5_000;
const timer = setInterval(() => {
  if (process.ppid === parent) return;
  clearInterval(timer);
  // The process start time (field 22 of /proc/<pid>/stat) tells this process from a later one
  // that reuses its pid.
  const started = (pid: number) => readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ")[19];
  const killer = `
    const started = (pid) => require("node:fs").readFileSync("/proc/" + pid + "/stat", "utf8").split(") ")[1]?.split(" ")[19];
    setTimeout(() => {
      try {
        if (started(${process.pid}) === ${JSON.stringify(started(process.pid))}) process.kill(${process.pid}, "SIGKILL");
      } catch {}
    }, ${GRACE_MS});`;
  spawn(process.execPath, ["-e", killer], { detached: true, stdio: "ignore" }).unref();
  process.kill(process.pid, "SIGTERM");
}, 300);
timer.unref();
