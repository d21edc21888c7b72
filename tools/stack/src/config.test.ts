import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { loadLauncherConfig, loadTestRunnerConfig } from "./config.js";
import { ROOT } from "./paths.js";

describe("the launcher's variables (config.ts)", () => {
  it("keeps pnpm start's defaults", () => {
    expect(loadLauncherConfig({})).toEqual({
      nodeEnv: "development",
      port: 3000,
      webPort: 5173,
      embeddedPgPort: 54329,
      databaseUrl: undefined,
      serviceDatabaseUrls: { identity: undefined, api: undefined },
      dataDir: path.join(ROOT, ".data"),
      authSecret: undefined,
      dataEncryptionKey: undefined,
      baseUrl: undefined,
      uploadDir: `${path.join(ROOT, ".data")}/uploads`,
      mcpSample: false,
      localIdp: false,
      localIdpPort: 0,
      dev: false,
      startedAt: undefined,
    });
  });

  it("reads the values pnpm start, pnpm dev and the tests set", () => {
    const config = loadLauncherConfig({
      WEB_PORT: "off",
      PORT: "3300",
      EMBEDDED_PG_PORT: "5555",
      STACK_DATA_DIR: "/tmp/stack",
      STACK_BUILD: "off",
      STACK_DEV: "1",
      STACK_STARTED_AT: "1700000000000",
      MCP_SAMPLE: "true",
      LOCAL_IDP: "true",
      LOCAL_IDP_PORT: "4000",
      // An empty DATABASE_URL means the embedded server, as the stack tests (faults.test.ts) use it.
      DATABASE_URL: "",
      IDENTITY_DATABASE_URL: "",
    });
    expect(config).toMatchObject({
      webPort: undefined,
      port: 3300,
      embeddedPgPort: 5555,
      dataDir: "/tmp/stack",
      uploadDir: "/tmp/stack/uploads",
      dev: true,
      startedAt: 1_700_000_000_000,
      mcpSample: true,
      localIdp: true,
      localIdpPort: 4000,
      databaseUrl: undefined,
      serviceDatabaseUrls: { identity: undefined, api: undefined },
    });
    expect(loadLauncherConfig({ WEB_PORT: "5373", MCP_SAMPLE: "" })).toMatchObject({ webPort: 5373, mcpSample: false });
  });

  it("takes TEST_DATABASE_URL ahead of DATABASE_URL for pnpm test", () => {
    expect(loadTestRunnerConfig({ TEST_DATABASE_URL: "postgres://t", DATABASE_URL: "postgres://d", CI: "true" })).toEqual({
      databaseUrl: "postgres://t",
      redisUrl: undefined,
      ci: true,
    });
    expect(loadTestRunnerConfig({ DATABASE_URL: "postgres://d", CI: "1" })).toMatchObject({ databaseUrl: "postgres://d", ci: false });
  });

  it("stops pnpm start on an invalid value with one line naming it and status 78, before anything starts", () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), "stack-config-"));
    try {
      const run = spawnSync(process.execPath, [path.join(ROOT, "tools/stack/dist/start.js")], {
        env: { ...process.env, STACK_DATA_DIR: dataDir, WEB_PORT: "abc", MCP_SAMPLE: "yes" },
        encoding: "utf8",
        timeout: 30_000,
      });
      expect(run.status).toBe(78);
      expect(run.stderr).toMatch(/^pnpm start: invalid configuration$/m);
      expect(run.stderr).toMatch(/^ {2}- WEB_PORT: a port number, or `off`$/m);
      expect(run.stderr).toMatch(/^ {2}- MCP_SAMPLE: /m);
      expect(readdirSync(dataDir)).toEqual([]);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
