/** Real API processes for tests: `node apps/api/dist/server.js`, as production runs it. */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** The built server entry (tests that spawn it need `pnpm turbo run build --filter=@app/api...`). */
export const SERVER = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../dist/server.js");

/** A running API process. */
export interface ApiProcess {
  url: string;
  proc: ChildProcess;
  /** Every line it wrote (stdout and stderr). */
  output: string[];
}

/** Throws a clear message when the package is not built. */
export function assertBuilt(): void {
  if (!existsSync(SERVER)) throw new Error("apps/api is not built: run `pnpm turbo run build --filter=@app/api...` first");
}

/** Starts `node apps/api/dist/server.js` on a free port and waits for its "listening" line. */
export async function spawnApi(env: Record<string, string>): Promise<ApiProcess> {
  const proc = spawn(process.execPath, [SERVER], {
    env: { ...process.env, ...env, PORT: "0", NODE_ENV: "test" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output: string[] = [];
  proc.stderr?.on("data", (c) => output.push(String(c)));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`api did not start: ${output.join("")}`)), 30_000);
    proc.stdout?.on("data", (chunk) => {
      for (const line of String(chunk).split("\n")) {
        output.push(line);
        if (!line.includes('"msg":"listening"')) continue;
        clearTimeout(timer);
        resolve((JSON.parse(line) as { port: number }).port);
      }
    });
    proc.once("exit", (code) => reject(new Error(`api exited with ${code}: ${output.join("")}`)));
  });
  return { url: `http://127.0.0.1:${port}`, proc, output };
}

/** Sends `signal` (unless the process already ended) and resolves with its exit code. */
export async function stopApi(api: ApiProcess, signal: NodeJS.Signals = "SIGTERM"): Promise<number | null> {
  if (api.proc.exitCode !== null || api.proc.signalCode !== null) return api.proc.exitCode;
  const exited = once(api.proc, "exit");
  api.proc.kill(signal);
  const [code] = (await exited) as [number | null];
  return code;
}
