#!/usr/bin/env node
// Walks README.md as a new user does: every line of its ```sh blocks runs literally as written,
// in order, in one bash session from the repository root (so `B=...` and `J=$(mktemp)` carry
// over). `pnpm start` runs in the background until the service answers; then the remaining lines
// run; then `pnpm start` is stopped BY ITS PID with SIGTERM (what an IDE stop button, a
// supervisor or `timeout` sends), and every process it started must be gone and every port it
// listened on free within 10 s, with no ELIFECYCLE failure printed for that stop. `pnpm test` is left to the test runs of .ci/run that follow, in
// the same checkout. The line that installs pnpm itself (`npm install -g pnpm@<packageManager>`)
// runs as written (.ci/run installed that version already, so it changes nothing); a corepack
// line would be listed, not run (corepack enable replaces the global pnpm), and so is a
// long-running `pnpm dev`.
// Also fails when `pnpm install` prints an "Ignored build scripts" box or the walk leaves a new
// file in the working directory (a cookie jar, say).
//   node .ci/readme-walk.mjs [--readme README.md] [--ready-timeout 300]
import { spawn } from "node:child_process";
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { classify, shellLines } from "./readme.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 && args[i + 1] ? args[i + 1] : fallback;
};
const readme = path.resolve(root, opt("--readme", "README.md"));
const readyTimeoutMs = Number(opt("--ready-timeout", "300")) * 1000;
const started = Date.now();
const say = (line) => process.stdout.write(`readme-walk | ${((Date.now() - started) / 1000).toFixed(1)}s ${line}\n`);
const problems = [];

const env = { ...process.env };
delete env.DATABASE_URL; // the README's path: the embedded PostgreSQL
delete env.TEST_DATABASE_URL;
const baseUrl = `http://localhost:${env.PORT || 3000}`;

/** Runs one script in bash from the repository root, echoing its output; resolves with it. */
function bash(script) {
  return new Promise((resolve) => {
    const child = spawn("bash", ["-c", script], { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    const take = (chunk) => {
      out += chunk;
      process.stdout.write(chunk);
    };
    child.stdout.on("data", take);
    child.stderr.on("data", take);
    child.once("exit", (code) => resolve({ code, out }));
  });
}

/** pid -> parent pid, for every process visible in /proc. */
function parents() {
  const map = new Map();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      map.set(Number(name), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {}
  }
  return map;
}

/** `pid` and every process below it. */
function tree(pid) {
  const map = parents();
  const found = new Set([pid]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const [child, parent] of map) {
      if (found.has(parent) && !found.has(child)) {
        found.add(child);
        grew = true;
      }
    }
  }
  return [...found].filter((p) => map.has(p));
}

/** TCP ports the given processes listen on (/proc/net/tcp{,6} LISTEN sockets owned by them). */
function listeningPorts(pids) {
  const inodes = new Set();
  for (const pid of pids) {
    let fds = [];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {}
    for (const fd of fds) {
      try {
        const m = readlinkSync(`/proc/${pid}/fd/${fd}`).match(/^socket:\[(\d+)\]$/);
        if (m) inodes.add(m[1]);
      } catch {}
    }
  }
  const ports = new Set();
  for (const file of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text = "";
    try {
      text = readFileSync(file, "utf8");
    } catch {}
    for (const row of text.split("\n").slice(1)) {
      const f = row.trim().split(/\s+/);
      if (f[3] === "0A" && inodes.has(f[9])) ports.add(Number.parseInt(f[1].split(":")[1], 16));
    }
  }
  return [...ports].sort((a, b) => a - b);
}

const alive = (pid) => {
  try {
    process.kill(pid, 0);
    return !readFileSync(`/proc/${pid}/stat`, "utf8").includes(") Z ");
  } catch {
    return false;
  }
};
const portTaken = (port) =>
  new Promise((resolve) => {
    const s = net.connect({ host: "127.0.0.1", port });
    s.once("connect", () => {
      s.destroy();
      resolve(true);
    });
    s.once("error", () => resolve(false));
  });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// A person waits for the launcher's `ready:` line (README, "What you get"); the walk does the same,
// and then checks that the line told the truth: identity and the API both answer.
let serverOutput = "";
async function waitReady(child) {
  const deadline = Date.now() + readyTimeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) return false;
    if (/^stack\s+\| ready: /m.test(serverOutput)) {
      const jwks = await fetch(`${baseUrl}/api/auth/jwks`).then(
        (r) => r.status,
        () => 0,
      );
      const me = await fetch(`${baseUrl}/api/me`).then(
        (r) => r.status,
        () => 0,
      );
      if (jwks === 200 && me === 401) return true;
      problems.push(`pnpm start said ready, but /api/auth/jwks answered ${jwks} and /api/me without a token ${me}`);
      return false;
    }
    await sleep(250);
  }
  return false;
}

const entries = readdirSync(root).sort();
const lines = shellLines(readFileSync(readme, "utf8"));
say(`${lines.length} shell lines in ${path.relative(root, readme)}; base URL ${baseUrl}`);

let server;
let stopSent = false;
let afterStop = "";
let script = "set -eo pipefail\n";
const flush = async () => {
  if (script === "set -eo pipefail\n") return true;
  const { code, out } = await bash(script);
  script = "set -eo pipefail\n";
  if (/Ignored build scripts/i.test(out)) problems.push('pnpm printed an "Ignored build scripts" box');
  if (code !== 0) problems.push(`a README line failed (exit ${code}); see the last "$ " line above`);
  return code === 0;
};
// Lines before `pnpm start` run first; the lines after it run in one session once it is ready.
for (const line of lines) {
  const what = classify(line);
  if (what.kind === "skip") {
    say(`not run: ${line.trim()}  (${what.why})`);
    continue;
  }
  if (what.kind === "background") {
    if (!(await flush())) break;
    say(`$ ${line.trim()}  (in the background)`);
    server = spawn("bash", ["-c", `exec ${line}`], { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] });
    for (const stream of [server.stdout, server.stderr]) {
      stream.on("data", (chunk) => {
        process.stdout.write(chunk);
        serverOutput += chunk;
        if (stopSent) afterStop += chunk;
      });
    }
    if (!(await waitReady(server))) {
      if (problems.length) break;
      problems.push(
        server.exitCode === null
          ? `pnpm start was not ready on ${baseUrl} within ${readyTimeoutMs / 1000}s`
          : `pnpm start exited (code ${server.exitCode}) before it was ready; see its output above`,
      );
      break;
    }
    say(`pnpm start is ready (pid ${server.pid})`);
    continue;
  }
  script += `printf '\\n$ %s\\n' ${JSON.stringify(line.trim()).replaceAll("$", "\\$").replaceAll("`", "\\`")}\n${line}\n`;
}
if (!problems.length) await flush();

if (server) {
  const pids = tree(server.pid);
  const ports = listeningPorts(pids);
  say(`stopping pnpm start: SIGTERM to pid ${server.pid} (${pids.length} processes, listening on ${ports.join(", ")})`);
  stopSent = true;
  server.kill("SIGTERM");
  const deadline = Date.now() + 10_000;
  let left = pids;
  let busy = ports;
  while (Date.now() < deadline) {
    left = pids.filter(alive);
    busy = [];
    for (const port of ports) if (await portTaken(port)) busy.push(port);
    if (!left.length && !busy.length) break;
    await sleep(250);
  }
  if (left.length || busy.length) {
    problems.push(
      `10 s after SIGTERM to pnpm start: still running ${left.join(", ") || "none"}; ports still taken ${busy.join(", ") || "none"}`,
    );
    for (const pid of left) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {}
    }
  } else {
    say(`stopped: every process gone, ports ${ports.join(", ")} free`);
  }
  // A stop asked for is not a failure: pnpm must not report one.
  if (/ELIFECYCLE|Command failed/.test(afterStop)) problems.push(`pnpm start reported a failure after an orderly SIGTERM`);
}

const added = readdirSync(root).filter(
  (name) => !entries.includes(name) && ![".data", "artifacts", ".turbo", "node_modules"].includes(name),
);
if (added.length) problems.push(`the walk left new files in the working directory: ${added.join(", ")}`);

const seconds = ((Date.now() - started) / 1000).toFixed(1);
if (problems.length) {
  for (const p of problems) say(`FAIL ${p}`);
  process.exit(1);
}
say(`README walked in ${seconds}s`);
