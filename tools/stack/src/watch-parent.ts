// Preloaded into every service the launcher spawns (`node --import .../watch-parent.js`, see
// processes.ts). A service whose launcher died without stopping it (SIGKILL, crash) is reparented;
// it then stops itself the orderly way (its own SIGTERM handler) instead of holding its port and
// its database connections forever.
const parent = process.ppid;
const timer = setInterval(() => {
  if (process.ppid === parent) return;
  clearInterval(timer);
  process.kill(process.pid, "SIGTERM");
}, 300);
timer.unref();
