// Preloaded into every service the launcher spawns (`node --import .../watch-parent.js`, see
// processes.ts). A service whose launcher died without stopping it (SIGKILL, crash) is reparented;
// it then stops itself the orderly way (its own SIGTERM handler) instead of holding its port and
// its database connections forever. Its output pipe died with the launcher, so a shutdown that
// stalls on it is ended after a grace period.
const parent = process.ppid;
const GRACE_MS = 5_000;
const timer = setInterval(() => {
  if (process.ppid === parent) return;
  clearInterval(timer);
  process.kill(process.pid, "SIGTERM");
  setTimeout(() => process.kill(process.pid, "SIGKILL"), GRACE_MS).unref();
}, 300);
timer.unref();
