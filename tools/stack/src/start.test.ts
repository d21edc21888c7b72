import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it, vi } from "vitest";
import { stackPort } from "./stop-helpers.js";

const entry = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "dist", "start.js");
const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

/** Runs `pnpm start`'s launcher on a fresh data dir with no DATABASE_URL, as a new user would. */
async function runStart(dataDir: string, port: number, pgPort: number, webPort: number) {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    WEB_PORT: String(webPort),
    STACK_DATA_DIR: dataDir,
    EMBEDDED_PG_PORT: String(pgPort),
  };
  // A fresh machine: no database URL, and none of the variables vitest injects (BASE_URL=/ ...).
  for (const name of ["DATABASE_URL", "TEST_DATABASE_URL", "BASE_URL", "MODE", "DEV", "PROD", "SSR"]) delete env[name];
  const child = spawn(process.execPath, [entry], { env, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.on("data", (d: Buffer) => {
    output += d.toString();
  });
  child.stderr.on("data", (d: Buffer) => {
    output += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const until = Date.now() + 60_000;
  while (!output.includes("ready: ") && Date.now() < until && child.exitCode === null) await new Promise((r) => setTimeout(r, 100));
  return { child, exited, output: () => output };
}

describe("pnpm start on a fresh machine (embedded PostgreSQL)", () => {
  it("serves the contract on one base URL, keeps its secret across restarts and stops cleanly on Ctrl-C", async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), "stack-start-"));
    dirs.push(dataDir);
    const port = await stackPort();
    const pgPort = await stackPort();
    const webPort = await stackPort();
    const base = `http://localhost:${port}`;

    const first = await runStart(dataDir, port, pgPort, webPort);
    expect(first.output()).toContain(`ready: ${base}`);
    // The web app on its own origin, pointed at the base URL, which allows that origin.
    const web = `http://localhost:${webPort}`;
    expect(await (await fetch(`${web}/config.js`)).text()).toContain(`"apiBaseUrl":${JSON.stringify(base)}`);
    expect((await fetch(`${web}/`)).headers.get("content-type")).toContain("text/html");
    const preflight = await fetch(`${base}/api/auth/get-session`, {
      method: "OPTIONS",
      headers: { origin: web, "access-control-request-method": "POST" },
    });
    expect(preflight.headers.get("access-control-allow-origin")).toBe(web);
    const jwks = (await (await fetch(`${base}/api/auth/jwks`)).json()) as { keys: { kid: string }[] };
    expect(jwks.keys).toHaveLength(1);
    // Identity and the API each serve /metrics on a port of their own, printed after `ready`.
    await vi.waitFor(() => expect(first.output()).toMatch(/metrics \(.*\): identity-1 http:\S+\/metrics, api-1 http:\S+\/metrics\n/));
    const metricsUrl = (name: string) => new RegExp(`${name} (http:\\S+/metrics)`).exec(first.output())?.[1] ?? "";
    const identityMetrics = await fetch(metricsUrl("identity-1"));
    expect(identityMetrics.headers.get("content-type")).toContain("text/plain; version=0.0.4");
    expect(await identityMetrics.text()).toMatch(/^identity_signing_key_age_seconds \d/m);
    expect(await (await fetch(metricsUrl("api-1"))).text()).toMatch(/^api_websockets_open 0$/m);
    expect(new URL(metricsUrl("api-1")).port).not.toBe(String(port));
    const secret = await readFile(path.join(dataDir, "secrets.json"), "utf8");
    first.child.kill("SIGINT");
    expect(await first.exited).toBe(0);
    expect(first.output()).toContain("stopped");
    await expect(fetch(`${base}/healthz`)).rejects.toThrow();
    await expect(fetch(metricsUrl("identity-1"))).rejects.toThrow();

    const second = await runStart(dataDir, port, pgPort, webPort);
    expect(second.output()).toContain("ready: ");
    const again = (await (await fetch(`${base}/api/auth/jwks`)).json()) as { keys: { kid: string }[] };
    expect(again.keys.map((k) => k.kid)).toEqual(jwks.keys.map((k) => k.kid));
    expect(await readFile(path.join(dataDir, "secrets.json"), "utf8")).toBe(secret);
    second.child.kill("SIGTERM");
    expect(await second.exited).toBe(0);
  });
});
