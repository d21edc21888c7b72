import { isAlive, parentOf } from "./pids.js";

const SHELLS = new Set(["sh", "dash", "bash", "zsh", "ash", "ksh"]);

/**
 * The processes whose death means "stop": the parent, and through any shell between (a package
 * script run as `sh -c "node …"`) the process that ran it (pnpm). An IDE's stop button, a
 * supervisor or `timeout` signals pnpm, which may die without passing the signal on.
 */
function watchedAncestors(): number[] {
  const watched = [process.ppid];
  let parent = parentOf(process.ppid);
  while (parent && SHELLS.has(parent.comm) && parent.ppid > 1) {
    watched.push(parent.ppid);
    parent = parentOf(parent.ppid);
  }
  return watched;
}

/** Calls `onGone` once when the parent (or the script runner above a shell) is gone. */
export function watchParent(onGone: () => void, intervalMs = 300): void {
  const ppid = process.ppid;
  const watched = ppid > 1 ? watchedAncestors() : [];
  const timer = setInterval(() => {
    if (process.ppid === ppid && watched.every(isAlive)) return;
    clearInterval(timer);
    onGone();
  }, intervalMs);
  timer.unref();
}

/**
 * Calls `stop` on SIGINT, SIGTERM and SIGHUP, and when the parent dies; a second signal calls
 * `force`. Output errors (the terminal or pnpm's pipe gone with the parent) are ignored so the
 * orderly stop still runs.
 */
export function onStopRequest(stop: (why: string) => void, force: () => void): void {
  let first = 0;
  const request = (why: string) => {
    // One Ctrl-C can arrive twice (from the terminal and passed on by a runner): only a signal
    // well after the first one means "now".
    if (first === 0) {
      first = Date.now();
      stop(why);
    } else if (Date.now() - first > 1_000) force();
  };
  for (const s of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(s, () => request(s));
  for (const stream of [process.stdout, process.stderr]) stream.on("error", () => undefined);
  watchParent(() => request("parent process gone"));
}
