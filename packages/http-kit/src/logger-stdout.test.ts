import { spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const PACKAGE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
/** Child processes import the built package (run `pnpm build` first), from the package directory. */
const DIST = path.join(PACKAGE, "dist/index.js");

/**
 * Preloaded into a child: a slow stdout. An asynchronous write(2) of fd 1 lands 300 ms late, as
 * when the thread pool is busy; one still pending when the process exits lands after every exit
 * listener registered before it, which is how an in-flight write can finish behind the lines
 * flushed synchronously at exit. A synchronous write of fd 1 takes 2 ms.
 */
const SLOW_STDOUT = `
  import fs from "node:fs";
  const { write, writeSync } = fs;
  const pending = new Set();
  let atExit = false;
  const pause = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
  fs.writeSync = function (fd, ...args) {
    if (fd === 1) pause(2);
    return writeSync.call(this, fd, ...args);
  };
  fs.write = function (fd, data, ...rest) {
    if (fd !== 1) return write.call(this, fd, data, ...rest);
    const callback = rest.pop();
    const job = () => { pending.delete(job); return writeSync(1, data, ...rest); };
    pending.add(job);
    if (!atExit) { atExit = true; process.on("exit", () => { for (const j of [...pending]) j(); }); }
    setTimeout(() => { if (pending.has(job)) callback(null, job()); }, 300);
  };`;

/** Runs a script in a child process (importing the built http-kit) and collects its stdout. */
function runChild(script: string, preload?: string): Promise<{ code: number | null; lines: string[] }> {
  const imports = preload ? ["--import", `data:text/javascript,${encodeURIComponent(preload)}`] : [];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...imports, "--input-type=module", "-e", script], {
      cwd: PACKAGE,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8");
    });
    child.stderr.on("data", (chunk: Buffer) => {
      err += chunk.toString("utf8");
    });
    child.once("error", reject);
    child.once("exit", (code) => {
      if (code !== 0) reject(new Error(`child exited ${code}: ${err}`));
      else resolve({ code, lines: out.split("\n").filter((l) => l.length > 0) });
    });
  });
}

/** A child that serves 40 requests, logs "before exit" and exits at once. */
const FORTY_THEN_EXIT = `
  import { createLogger, requestLogging } from ${JSON.stringify(DIST)};
  import express from "express";
  import http from "node:http";
  const logger = createLogger({ name: "child" });
  const app = express();
  app.use(requestLogging(logger));
  app.get("/x", (_req, res) => { res.json({ ok: true }); });
  const server = app.listen(0, "127.0.0.1", async () => {
    const { port } = server.address();
    const agent = new http.Agent({ keepAlive: true });
    for (let i = 0; i < 40; i++) {
      await new Promise((done) => http.get({ port, path: "/x?i=" + i, agent }, (r) => { r.resume(); r.on("end", done); }));
    }
    logger.info("before exit");
    process.exit(0);
  });`;

function expectFortyThenExit(lines: string[]): void {
  const parsed = lines.map((l) => JSON.parse(l) as { msg?: string; req?: { url?: string } });
  expect(parsed.map((l) => l.req?.url ?? l.msg)).toEqual([...Array.from({ length: 40 }, (_, i) => `/x?i=${i}`), "before exit"]);
}

describe("stdout destination (buffered)", () => {
  it("writes out every buffered access line when the process exits right after logging", async () => {
    const { lines } = await runChild(FORTY_THEN_EXIT);
    expectFortyThenExit(lines);
  });

  it("keeps every line in order at exit when stdout is slow (no write is left in flight)", async () => {
    const { lines } = await runChild(FORTY_THEN_EXIT, SLOW_STDOUT);
    expectFortyThenExit(lines);
  });

  it("delivers lines while the process keeps running: other lines at once, access lines within the flush interval", async () => {
    const script = `
      import { createLogger, requestLogging } from ${JSON.stringify(DIST)};
      import express from "express";
      import http from "node:http";
      const logger = createLogger({ name: "child" });
      const app = express();
      app.use(requestLogging(logger));
      app.get("/x", (_req, res) => { res.json({ ok: true }); });
      const server = app.listen(0, "127.0.0.1", () => {
        logger.info({ port: 1 }, "listening");
        http.get({ port: server.address().port, path: "/x" }, (r) => r.resume());
      });`;
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], { cwd: PACKAGE, stdio: ["ignore", "pipe", "inherit"] });
    const lines: Array<{ msg?: string }> = [];
    let buffered = "";
    await new Promise<void>((resolve, reject) => {
      child.once("exit", (code) => reject(new Error(`child exited ${code} before logging both lines`)));
      child.stdout.on("data", (chunk: Buffer) => {
        buffered += chunk.toString("utf8");
        const complete = buffered.split("\n");
        buffered = complete.pop() ?? "";
        for (const l of complete) if (l) lines.push(JSON.parse(l) as { msg?: string });
        if (lines.some((l) => l.msg === "request completed")) resolve();
      });
    });
    child.removeAllListeners("exit");
    child.kill("SIGKILL"); // no exit handler runs: what arrived was written while running
    expect(lines.map((l) => l.msg)).toEqual(["listening", "request completed"]);
  });
});
