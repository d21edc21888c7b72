import { existsSync, readdirSync } from "node:fs";
import path from "node:path";
import { defineConfig } from "vitest/config";

// One vitest run over every workspace package (`pnpm test` calls it through tools/stack, which
// provides TEST_DATABASE_URL). Each package can still run alone: `pnpm --filter <pkg> test`.
const packages = [
  ...["packages", "apps", "tools"].flatMap((group) =>
    existsSync(group)
      ? readdirSync(group)
          .map((name) => path.join(group, name))
          .filter((dir) => existsSync(path.join(dir, "package.json")))
      : [],
  ),
  // bench/ is a package of its own (project "bench": unit tests of the benchmark's helpers only).
  ...(existsSync("bench/package.json") ? ["bench"] : []),
];

export default defineConfig({
  test: {
    projects: packages.map((root) => ({ extends: true, test: { root, name: path.basename(root) } })),
    reporters: ["default", ["json", { outputFile: "artifacts/test-results.json" }]],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    exclude: ["**/node_modules/**", "**/dist/**"],
  },
});
