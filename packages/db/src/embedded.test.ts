import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { startEmbeddedPostgres } from "./embedded.js";

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

async function selectOne(url: string): Promise<number> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query<{ n: number }>("SELECT 1 AS n")).rows[0]?.n ?? 0;
  } finally {
    await c.end();
  }
}

describe("embedded PostgreSQL", () => {
  it("keeps data across restarts and recovers from a server left by a SIGKILLed parent", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "embedded-test-"));
    dirs.push(dir);
    const dataDir = path.join(dir, "data");
    const first = await startEmbeddedPostgres({ dataDir, port: 0, persistent: true });
    await selectOne(first.url);
    const c = new pg.Client({ connectionString: first.url });
    await c.connect();
    await c.query("CREATE TABLE kept (v text); INSERT INTO kept VALUES ('still here')");
    await c.end();
    await first.stop();

    // A parent that starts the server and is then SIGKILLed leaves postgres running.
    const dist = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "dist", "embedded.js");
    const script = `import { startEmbeddedPostgres } from ${JSON.stringify(dist)};
      await startEmbeddedPostgres({ dataDir: ${JSON.stringify(dataDir)}, port: 0, persistent: true });
      process.stdout.write("up\\n"); setInterval(() => {}, 1000);`;
    const parent = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "inherit"] });
    await new Promise<void>((resolve, reject) => {
      parent.stdout.on("data", (d: Buffer) => d.toString().includes("up") && resolve());
      parent.once("exit", () => reject(new Error("parent exited early")));
    });
    parent.kill("SIGKILL");
    await new Promise((r) => parent.once("exit", r));

    const again = await startEmbeddedPostgres({ dataDir, port: 0, persistent: true });
    try {
      // A live server owned by a running launcher is not stale: it is refused, not killed.
      await expect(startEmbeddedPostgres({ dataDir, port: 0, persistent: true })).rejects.toThrow(/in use by another running process/);
      expect(await selectOne(again.url)).toBe(1);
      const c2 = new pg.Client({ connectionString: again.url });
      await c2.connect();
      const { rows } = await c2.query<{ v: string }>("SELECT v FROM kept");
      await c2.end();
      expect(rows).toEqual([{ v: "still here" }]);
    } finally {
      await again.stop();
    }
  });
});
