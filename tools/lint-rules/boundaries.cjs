/**
 * The layering rules of the monorepo for dependency-cruiser, built for a repository root so that
 * the same rules run on the real tree (.dependency-cruiser.cjs) and on the fixtures of
 * boundaries.test.ts.
 *
 * Workspace packages (`@app/*`) resolve to the TypeScript source of the entry points their
 * package.json publishes (`exports`, else `main`: `./dist/<name>.js` is `src/<name>.ts`), so lint
 * needs no build and an import of anything else of another package (its `dist/`, `src/` or files
 * beside them) resolves to a path no rule allows.
 */
const fs = require("node:fs");
const path = require("node:path");

const GROUPS = ["apps", "packages", "tools"];

/** Every workspace package under root: its folder (relative, with `/`) and its package.json. */
function workspacePackages(root) {
  const found = [];
  for (const group of GROUPS) {
    const dir = path.join(root, group);
    if (!fs.existsSync(dir)) continue;
    for (const name of fs.readdirSync(dir).sort()) {
      const manifest = path.join(dir, name, "package.json");
      if (fs.existsSync(manifest)) found.push({ dir: `${group}/${name}`, manifest: JSON.parse(fs.readFileSync(manifest, "utf8")) });
    }
  }
  const bench = path.join(root, "bench", "package.json");
  if (fs.existsSync(bench)) found.push({ dir: "bench", manifest: JSON.parse(fs.readFileSync(bench, "utf8")) });
  return found;
}

/** `./dist/<path>.js` → `src/<path>.ts` (or .tsx), when that source exists. */
function sourceOf(root, dir, target) {
  const match = /^(?:\.\/)?dist\/(.+)\.js$/.exec(target);
  if (!match) return undefined;
  for (const ext of [".ts", ".tsx"]) {
    const file = `${dir}/src/${match[1]}${ext}`;
    if (fs.existsSync(path.join(root, file))) return file;
  }
  return undefined;
}

/** The published entry points: import specifier → source file (relative to root). */
function entryPoints(root) {
  const entries = new Map();
  for (const { dir, manifest } of workspacePackages(root)) {
    if (typeof manifest.name !== "string") continue;
    const exportsField = manifest.exports ?? (manifest.main ? { ".": manifest.main } : {});
    const map = typeof exportsField === "string" ? { ".": exportsField } : exportsField;
    for (const [key, value] of Object.entries(map)) {
      const target = typeof value === "string" ? value : (value?.import ?? value?.default);
      const file = typeof target === "string" ? sourceOf(root, dir, target) : undefined;
      if (file) entries.set(`${manifest.name}${key.slice(1)}`, file);
    }
  }
  return entries;
}

/** enhanced-resolve aliases: each entry point's specifier, matched exactly (`$`), to its source. */
function aliasesFor(root) {
  const alias = {};
  for (const [specifier, file] of entryPoints(root)) alias[`${specifier}$`] = path.join(root, file);
  return alias;
}

const escapeRegExp = (text) => text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
/** An npm module, wherever pnpm stores it (or its bare name when it does not resolve). */
const npm = (name) => `(^${escapeRegExp(name)}(/|$)|(^|/)node_modules/${escapeRegExp(name)}/)`;
/** Files that only tests load (they may use test libraries): `*.test.ts`, `test/`, `test-fixtures.ts`. */
const TEST_FILES = ["\\.test\\.tsx?$", "(^|/)test/", "(^|/)test-fixtures\\.ts$"];
/** The test files of one package folder. */
const testFilesOf = (folder) => [
  `^${escapeRegExp(folder)}/.*\\.test\\.tsx?$`,
  `^${escapeRegExp(folder)}/test/`,
  `^${escapeRegExp(folder)}/.*/test/`,
  `^${escapeRegExp(folder)}/.*test-fixtures\\.ts$`,
];

function forbiddenRules(root) {
  const entries = [...entryPoints(root).values()].map((file) => `^${escapeRegExp(file)}$`);
  return [
    {
      name: "no-circular",
      severity: "error",
      comment: "Modules form a tree: a cycle makes load order and ownership ambiguous.",
      from: {},
      to: { circular: true },
    },
    {
      name: "not-to-unresolvable",
      severity: "error",
      comment:
        "Every import resolves (an unpublished subpath of a workspace package does not). The Prisma client that packages/db's build generates is absent before the first build, when CI lints.",
      from: {},
      to: { couldNotResolve: true, pathNot: "^\\./generated/prisma/" },
    },
    {
      name: "packages-not-to-apps",
      severity: "error",
      comment: "Packages are the shared layer: apps import packages, never the reverse.",
      from: { path: "^packages/" },
      to: { path: "^(apps|bench)/" },
    },
    {
      name: "packages-not-to-tools",
      severity: "error",
      comment: "Package code never loads tools; a package's tests may (tools/stack starts the real servers they test against).",
      from: { path: "^packages/", pathNot: TEST_FILES },
      to: { path: "^tools/" },
    },
    {
      name: "api-not-to-identity",
      severity: "error",
      comment: "The API trusts identity through signed tokens only; it never loads identity code.",
      from: { path: "^apps/api/" },
      to: { path: "^apps/identity/" },
    },
    {
      name: "apps-not-to-other-apps",
      severity: "error",
      comment: "Each app is its own service: shared code lives in packages/.",
      from: { path: "^apps/([^/]+)/" },
      to: { path: "^apps/", pathNot: "^apps/$1/" },
    },
    {
      name: "contracts-only-zod",
      severity: "error",
      comment: "The contracts are schemas any runtime can load: zod and their own files only.",
      from: { path: "^packages/contracts/", pathNot: TEST_FILES },
      to: { pathNot: ["^packages/contracts/", npm("zod")] },
    },
    {
      name: "contracts-tests-only-test-libraries",
      severity: "error",
      comment: "The contracts' tests add vitest and fast-check, nothing else.",
      from: { path: testFilesOf("packages/contracts") },
      to: { pathNot: ["^packages/contracts/", npm("zod"), npm("vitest"), npm("@vitest"), npm("fast-check")] },
    },
    {
      name: "auth-verify-only-jose",
      severity: "error",
      comment: "The verifier is the audited primitive: jose and node built-ins only.",
      from: { path: "^packages/auth-verify/", pathNot: TEST_FILES },
      to: { dependencyTypesNot: ["core"], pathNot: ["^packages/auth-verify/", npm("jose")] },
    },
    {
      name: "auth-verify-tests-only-test-libraries",
      severity: "error",
      comment: "The verifier's tests add fast-check and vitest, nothing else.",
      from: { path: testFilesOf("packages/auth-verify") },
      to: {
        dependencyTypesNot: ["core"],
        pathNot: ["^packages/auth-verify/", npm("jose"), npm("fast-check"), npm("vitest"), npm("@vitest")],
      },
    },
    {
      name: "api-folders-not-circular",
      severity: "error",
      comment:
        "The API is built by feature folders (apps/api/src/tasks, mcp, uploads, ...) over entry/ and lib/: no folder imports a folder that imports it back, so each feature can be read, moved or removed from the top down.",
      scope: "folder",
      from: { path: "^apps/api/src/" },
      to: { circular: true },
    },
    {
      name: "only-entry-points-of-other-packages",
      severity: "error",
      comment: "Another package is reached through what its package.json exports, never its dist/ or src/ files.",
      from: { path: "^((?:apps|packages|tools)/[^/]+|bench)/" },
      to: { path: "^(apps|packages|tools|bench)/", pathNot: ["^$1/", ...entries] },
    },
  ];
}

/** The dependency-cruiser configuration for the repository at root. */
function configFor(root) {
  return {
    forbidden: forbiddenRules(root),
    options: {
      baseDir: root,
      // Build output, generated code and npm modules are met (a rule can name them) but not followed.
      doNotFollow: { path: ["(^|/)node_modules/", "(^|/)dist/", "(^|/)generated/"] },
      // Type-only imports are dependencies too: a type from identity couples the API to it.
      tsPreCompilationDeps: true,
      combinedDependencies: false,
      // npm packages resolve as Node resolves them (package.json `exports` first).
      enhancedResolveOptions: {
        exportsFields: ["exports"],
        conditionNames: ["import", "require", "node", "default", "types"],
        mainFields: ["module", "main", "types"],
        extensions: [".ts", ".tsx", ".d.ts", ".js", ".mjs", ".cjs", ".json"],
      },
      reporterOptions: { text: { highlightFocused: true } },
    },
  };
}

module.exports = { aliasesFor, configFor, entryPoints };
