import { mkdtempSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { startProcess, stopProcess, waitHealthy } from "./processes.js";

/** A /healthz on a free port answering with `instance`. */
async function healthz(instance: () => string | undefined) {
  const server = http.createServer((_req, res) => res.end(JSON.stringify({ status: "ok", instance: instance() })));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/healthz` };
}

describe("waitHealthy", () => {
  it("takes a health answer only from the process it spawned (its STACK_INSTANCE_ID), not from another on the port", async () => {
    // A child that never listens: whatever answers on the port is someone else.
    const entry = path.join(mkdtempSync(path.join(os.tmpdir(), "stack-idle-")), "idle.mjs");
    writeFileSync(entry, "setInterval(() => {}, 1000);\n");
    const proc = startProcess({ name: "idle", entry, env: process.env });
    let answer: string | undefined = "an older instance";
    const { server, url } = await healthz(() => answer);
    try {
      await expect(waitHealthy(url, proc, 1_500)).rejects.toThrow(/did not become healthy/);
      answer = proc.instance;
      await expect(waitHealthy(url, proc, 5_000)).resolves.toBeUndefined();
    } finally {
      server.close();
      await stopProcess(proc, 1_000);
    }
  });
});
