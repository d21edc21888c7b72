import { type ChildProcess, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, type FSWatcher, readdirSync, readFileSync, watch } from "node:fs";
import path from "node:path";
import type { RunningStack } from "./launch.js";
import { ROOT } from "./paths.js";

/** The packages `pnpm dev` rebuilds on change (the web app has Vite's own hot reload). */
const FILTERS = ["--filter=@app/api...", "--filter=@app/identity...", "--filter=@app/gateway..."];

/** A rebuilt file under `<dir>/dist` restarts the services it belongs to. */
function ownersOf(dir: string): (name: string) => boolean {
  if (dir === "apps/api") return (n) => n.startsWith("api-");
  if (dir === "apps/identity") return (n) => n.startsWith("identity-");
  if (dir === "apps/gateway") return (n) => n === "gateway";
  return (n) => n !== "web"; // a shared package: every service
}

const hash = (file: string) => {
  try {
    return createHash("sha1").update(readFileSync(file)).digest("hex");
  } catch {
    return "";
  }
};

function jsFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".js"))
    .map((f) => path.join(dir, f));
}

/** The development loop of `pnpm dev`: what it runs, to record and stop. */
export interface DevLoop {
  turbo: ChildProcess;
  stop(): void;
}

/**
 * `pnpm dev`: `turbo watch build` recompiles a package when its source changes (JavaScript only,
 * typecheck stays its own task), and a service restarts (supervise.ts) when the JavaScript it runs
 * changed. Files are compared by content: turbo restoring identical outputs from its cache
 * restarts nothing.
 */
export function startDevLoop(stack: RunningStack, log: (line: string) => void): DevLoop {
  const turbo = spawn(path.join(ROOT, "node_modules/.bin/turbo"), ["watch", "build", ...FILTERS, "--output-logs=errors-only"], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  for (const stream of [turbo.stdout, turbo.stderr]) {
    stream.setEncoding("utf8");
    stream.on("data", (chunk: string) => {
      for (const line of chunk.split("\n")) if (/error/i.test(line)) log(`build: ${line.trim()}`);
    });
  }
  const dirs = [
    "apps/api",
    "apps/identity",
    "apps/gateway",
    ...readdirSync(path.join(ROOT, "packages")).map((p) => `packages/${p}`),
  ].filter((d) => existsSync(path.join(ROOT, d, "dist")));
  const known = new Map<string, string>();
  for (const d of dirs) for (const f of jsFiles(path.join(ROOT, d, "dist"))) known.set(f, hash(f));
  const pending = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    const owners = [...pending].map(ownersOf);
    const changed = [...pending].join(", ");
    pending.clear();
    log(`changed: ${changed}; restarting the services that run it`);
    void stack.restart((name) => owners.some((owns) => owns(name)));
  };
  const watchers: FSWatcher[] = dirs.map((d) =>
    watch(path.join(ROOT, d, "dist"), { recursive: true }, (_event, file) => {
      if (!file?.endsWith(".js")) return;
      const full = path.join(ROOT, d, "dist", file);
      const now = hash(full);
      if (!now || known.get(full) === now) return;
      known.set(full, now);
      pending.add(d);
      clearTimeout(timer);
      timer = setTimeout(flush, 500);
    }),
  );
  return {
    turbo,
    stop() {
      clearTimeout(timer);
      for (const w of watchers) w.close();
      if (turbo.pid) {
        try {
          process.kill(-turbo.pid, "SIGTERM");
        } catch {
          // gone
        }
      }
    },
  };
}
