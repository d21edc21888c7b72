#!/usr/bin/env node
// `pnpm start`: builds what the stack runs (turbo; cached after the first run; not the test
// tools) with a progress line, then runs the launcher (dist/start.js) in its own process group.
// A terminal's Ctrl-C reaches every process of the foreground group at once; here only this one
// gets it and passes one signal on, so the launcher stops the services first and the embedded
// PostgreSQL last (launch.ts) instead of PostgreSQL shutting down under draining services. The
// launcher's exit code is this process's: 0 after a clean stop, so pnpm reports no failure.
// STACK_BUILD=off skips the build (the launcher's own tests build first).
import { spawn } from "node:child_process";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { stripVTControlCharacters } from "node:util";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const log = (line) => process.stdout.write(`stack    | ${line}\n`);

/** Runs `turbo run build`; resolves true when it succeeded, exits this process when stopped. */
async function build() {
  const started = performance.now();
  log("▸ build: compiling the packages (turbo; cached after the first run)");
  const turbo = spawn(
    path.join(root, "node_modules/.bin/turbo"),
    ["run", "build", "--filter=@app/stack...", "--filter=@app/web...", "--output-logs=errors-only"],
    {
      cwd: root,
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let output = "";
  for (const stream of [turbo.stdout, turbo.stderr]) stream.on("data", (d) => (output += d.toString()));
  let stopped = false;
  const stop = () => {
    stopped = true;
    turbo.kill("SIGTERM");
  };
  const signals = ["SIGINT", "SIGTERM", "SIGHUP"];
  for (const s of signals) process.on(s, stop);
  const ppid = process.ppid;
  const watch = setInterval(() => process.ppid !== ppid && stop(), 300);
  // A first build takes a while: say so now and then instead of sitting silent.
  const ticker = setInterval(() => log(`  build: still compiling (${((performance.now() - started) / 1000).toFixed(0)} s)`), 10_000);
  const code = await new Promise((resolve) => turbo.once("exit", (c) => resolve(c ?? 1)));
  clearInterval(watch);
  clearInterval(ticker);
  for (const s of signals) process.removeListener(s, stop);
  if (stopped) {
    log("stopped during the build");
    process.exit(0);
  }
  const plain = stripVTControlCharacters(output);
  if (code !== 0) {
    process.stdout.write(plain);
    log(`✗ build failed (turbo exited with ${code})`);
    process.exit(1);
  }
  const tasks = /Tasks:\s+(\d+) successful/.exec(plain)?.[1];
  const cached = /Cached:\s+(\d+) cached/.exec(plain)?.[1];
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  log(`✓ build: ${tasks ?? "all"} packages built${cached ? `, ${cached} from cache` : ""} (${seconds} s)`);
}

/** Runs the launcher; passes signals on, and stops it when this process's parent dies. */
async function launch() {
  const launcher = spawn(process.execPath, [path.join(root, "tools/stack/dist/start.js")], {
    stdio: ["ignore", "inherit", "inherit"],
    // The launcher's "since start" counts from here, the build included (progress.ts).
    env: { ...process.env, STACK_STARTED_AT: String(Math.round(performance.timeOrigin)) },
    detached: true,
  });
  const pass = (signal) => () => launcher.kill(signal);
  for (const s of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(s, pass(s));
  for (const stream of [process.stdout, process.stderr]) stream.on("error", () => undefined);
  const ppid = process.ppid;
  const watch = setInterval(() => {
    if (process.ppid === ppid) return;
    clearInterval(watch);
    launcher.kill("SIGTERM");
  }, 300);
  const [code, signal] = await new Promise((resolve) => launcher.once("exit", (c, s) => resolve([c, s])));
  process.exit(code ?? (signal === "SIGKILL" ? 137 : 1));
}

if (process.env.STACK_BUILD !== "off") await build();
await launch();
