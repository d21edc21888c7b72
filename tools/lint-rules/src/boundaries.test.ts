import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { cruise, type IViolation } from "dependency-cruiser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FIXTURE } from "./fixtures.js";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const PACKAGE = path.resolve(HERE, "..");
const require = createRequire(import.meta.url);
const { aliasesFor, configFor } = require("../boundaries.cjs") as {
  aliasesFor(root: string): Record<string, string>;
  configFor(root: string): { forbidden: Array<{ name: string }>; options: Record<string, unknown> };
};

/** `rule: from → to`, with npm modules named by package (pnpm's store paths vary). */
function describeViolation(v: IViolation): string {
  const to = /.*node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(v.to)?.[1] ?? v.to;
  return `${v.rule.name}: ${v.from} → ${to}`;
}

let root = "";
let violations: string[] = [];

beforeAll(async () => {
  root = mkdtempSync(path.join(os.tmpdir(), "lint-rules-"));
  for (const [file, text] of Object.entries(FIXTURE)) {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    writeFileSync(path.join(root, file), text);
  }
  // npm imports of the fixture (zod, jose, vitest, fast-check) resolve to this package's own.
  symlinkSync(path.join(PACKAGE, "node_modules"), path.join(root, "node_modules"), "dir");
  const config = configFor(root);
  const result = await cruise(
    ["apps", "packages", "tools", "bench"],
    { ...config.options, validate: true, ruleSet: { forbidden: config.forbidden } } as Parameters<typeof cruise>[1],
    { alias: aliasesFor(root) } as Parameters<typeof cruise>[2],
  );
  if (typeof result.output === "string") throw new Error(result.output);
  violations = result.output.summary.violations.map(describeViolation).sort();
});

afterAll(() => {
  if (root) rmSync(root, { recursive: true, force: true });
});

describe("import boundaries (boundaries.cjs on a repository that breaks each rule once)", () => {
  it("reports exactly the broken imports, and none of the allowed ones", () => {
    expect(violations).toEqual(
      [
        "api-folders-not-circular: apps/api/src/events → apps/api/src/tasks",
        "api-folders-not-circular: apps/api/src/tasks → apps/api/src/events",
        "api-not-to-identity: apps/api/src/uses-identity.ts → apps/identity/src/server.ts",
        "apps-not-to-other-apps: apps/api/src/uses-identity.ts → apps/identity/src/server.ts",
        "apps-not-to-other-apps: apps/gateway/src/server.ts → apps/api/src/app.ts",
        "auth-verify-only-jose: packages/auth-verify/src/uses-vitest.ts → vitest",
        "auth-verify-only-jose: packages/auth-verify/src/uses-zod.ts → zod",
        "auth-verify-tests-only-test-libraries: packages/auth-verify/src/test-fixtures.ts → zod",
        "contracts-only-zod: packages/contracts/src/uses-jose.ts → jose",
        "contracts-only-zod: packages/contracts/src/uses-node.ts → fs",
        "contracts-only-zod: packages/contracts/src/uses-package.ts → packages/lib/src/index.ts",
        "contracts-tests-only-test-libraries: packages/contracts/src/jose.test.ts → jose",
        "no-circular: packages/cycle/src/a.ts → packages/cycle/src/b.ts",
        "not-to-unresolvable: bench/src/deep-by-name.ts → @fixture/api/dist/app.js",
        "only-entry-points-of-other-packages: apps/gateway/src/server.ts → apps/api/src/app.ts",
        "only-entry-points-of-other-packages: bench/src/deep-dist.ts → apps/identity/dist/server.js",
        "only-entry-points-of-other-packages: bench/src/deep-src.ts → apps/api/src/app.ts",
        "packages-not-to-apps: packages/lib/src/index.ts → apps/api/src/server.ts",
        "packages-not-to-tools: packages/lib/src/uses-tool.ts → tools/stack/src/index.ts",
      ].sort(),
    );
  });

  it("has a fixture that breaks every rule", () => {
    const broken = new Set(violations.map((line) => line.slice(0, line.indexOf(":"))));
    expect(
      configFor(root)
        .forbidden.map((rule) => rule.name)
        .filter((name) => !broken.has(name)),
    ).toEqual([]);
  });
});
