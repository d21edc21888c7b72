// Trims the folder `pnpm deploy --prod` made (the images' build stage runs it on /out) to what the
// app loads at run time. `pnpm deploy --prod` keeps the optional peers that auto-install-peers
// (.npmrc) put in the lockfile, and deploying with that setting off would make the frozen
// lockfile fail. So this deletes them afterwards:
//   1. the optional peers in DROPPED_PEERS (the prisma CLI, a peer of @prisma/client, and
//      typescript) and every store package that only they reach (effect, the CLI's engines
//      and config loader): a walk of dependencies, optional dependencies and peers from the
//      app's package.json keeps everything else;
//   2. files nothing executes: source maps, TypeScript sources and declarations (Node.js never
//      strips types under node_modules), Markdown, @types packages;
//   3. the TypeScript sources, tests and tsconfig files of the app and the workspace packages
//      copied in (their package.json points at dist/);
//   4. @prisma/client's engines for other databases and engine types: the generated client
//      (prisma/schema.prisma: provider postgresql, engineType client) loads runtime/client and
//      query_compiler_bg.postgresql only.
// It prints what it removed and exits 1 when a kept package's dependency is missing, so a
// broken folder stops the build instead of the container.
//   node docker/prune-deploy.mjs /out
import fs from "node:fs";
import path from "node:path";

const DROPPED_PEERS = new Set(["prisma", "typescript"]);
const PRISMA_RUNTIME_KEEP = /^(client|index-browser|query_compiler_bg\.postgresql)(\.|$)/;
const DEAD_FILE = /\.(map|[cm]?ts|md|markdown)$/i;

const root = path.resolve(process.argv[2] ?? "");
const modules = path.join(root, "node_modules");
const store = path.join(modules, ".pnpm");
if (!fs.existsSync(store)) {
  console.error(`prune-deploy: ${store} does not exist (run it on the folder pnpm deploy made)`);
  process.exit(2);
}

const sizeOf = (p) => {
  const st = fs.lstatSync(p, { throwIfNoEntry: false });
  if (!st || st.isSymbolicLink()) return 0;
  if (!st.isDirectory()) return st.size;
  let total = 0;
  for (const name of fs.readdirSync(p)) total += sizeOf(path.join(p, name));
  return total;
};
const mb = (bytes) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
const before = sizeOf(root);

/** Node's lookup of `name` from a package folder: node_modules folders up to the root. */
function resolve(fromDir, name) {
  for (let dir = fromDir; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, "node_modules", name);
    if (fs.existsSync(path.join(candidate, "package.json"))) return fs.realpathSync(candidate);
    if (dir === root || path.dirname(dir) === dir) return undefined;
  }
}

/** The store entry (node_modules/.pnpm/<entry>) a real package folder lives in. */
function storeEntry(realDir) {
  const rel = path.relative(store, realDir);
  return rel.startsWith("..") ? undefined : rel.split(path.sep)[0];
}

/** The package folder of a store entry: `@app+db@file+...` holds node_modules/@app/db. */
function storeEntryPackage(entry) {
  const at = entry.indexOf("@", 1);
  return path.join(store, entry, "node_modules", entry.slice(0, at).replace("+", "/"));
}

const keptEntries = new Set();
const missing = [];
const visited = new Set();
const queue = [root];
while (queue.length) {
  const dir = queue.pop();
  if (visited.has(dir)) continue;
  visited.add(dir);
  const entry = storeEntry(dir);
  if (entry) keptEntries.add(entry);
  const pkg = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8"));
  const optionalPeers = new Set(Object.entries(pkg.peerDependenciesMeta ?? {}).flatMap(([n, m]) => (m?.optional ? [n] : [])));
  const wanted = [
    ...Object.keys(pkg.dependencies ?? {}).map((name) => [name, true]),
    ...Object.keys(pkg.optionalDependencies ?? {}).map((name) => [name, false]),
    ...Object.keys(pkg.peerDependencies ?? {})
      .filter((name) => !(optionalPeers.has(name) && DROPPED_PEERS.has(name)))
      .map((name) => [name, !optionalPeers.has(name)]),
  ];
  for (const [name, required] of wanted) {
    const found = resolve(dir, name);
    if (found) queue.push(found);
    else if (required && !pkg.optionalDependencies?.[name]) missing.push(`${pkg.name} needs ${name}`);
  }
}
if (missing.length) {
  console.error(`prune-deploy: dependencies missing before pruning:\n  ${missing.join("\n  ")}`);
  process.exit(1);
}

let removed = 0;
const dropped = [];
for (const entry of fs.readdirSync(store)) {
  if (entry === "node_modules" || entry === "lock.yaml" || keptEntries.has(entry)) continue;
  const p = path.join(store, entry);
  removed += sizeOf(p);
  dropped.push(entry);
  fs.rmSync(p, { recursive: true, force: true });
}

/** Deletes symbolic links whose target is gone (pnpm's hoisted links in .pnpm/node_modules). */
function dropDanglingLinks(dir) {
  for (const d of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, d.name);
    if (d.isSymbolicLink()) {
      if (!fs.existsSync(p)) fs.unlinkSync(p);
    } else if (d.isDirectory() && d.name.startsWith("@")) dropDanglingLinks(p);
  }
}
function dropAllDanglingLinks() {
  dropDanglingLinks(modules);
  for (const entry of fs.readdirSync(store)) {
    const nested = entry === "node_modules" ? path.join(store, entry) : path.join(store, entry, "node_modules");
    if (fs.existsSync(nested)) dropDanglingLinks(nested);
  }
}
dropAllDanglingLinks();

/** Deletes files nothing executes, in every real (not linked) folder under `dir`. */
function dropDeadFiles(dir) {
  for (const d of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, d.name);
    if (d.isSymbolicLink()) continue;
    if (d.isDirectory()) dropDeadFiles(p);
    else if (DEAD_FILE.test(d.name)) {
      removed += fs.statSync(p).size;
      fs.unlinkSync(p);
    }
  }
}
dropDeadFiles(root);
for (const entry of fs.readdirSync(store)) {
  if (!entry.startsWith("@types+")) continue;
  const p = path.join(store, entry);
  removed += sizeOf(p);
  fs.rmSync(p, { recursive: true, force: true });
}
dropAllDanglingLinks();

const workspaceDirs = [
  root,
  ...fs
    .readdirSync(store)
    .filter((e) => e.includes("@file+"))
    .map((e) => storeEntryPackage(e)),
];
for (const dir of workspaceDirs) {
  for (const name of fs.readdirSync(dir)) {
    if (!/^(src|test|tsconfig.*\.json|.*\.tsbuildinfo)$/.test(name)) continue;
    const p = path.join(dir, name);
    removed += sizeOf(p);
    fs.rmSync(p, { recursive: true, force: true });
  }
}

for (const entry of fs.readdirSync(store)) {
  if (!entry.startsWith("@prisma+client@")) continue;
  const runtime = path.join(store, entry, "node_modules", "@prisma", "client", "runtime");
  if (!fs.existsSync(runtime)) continue;
  for (const name of fs.readdirSync(runtime)) {
    if (PRISMA_RUNTIME_KEEP.test(name)) continue;
    const p = path.join(runtime, name);
    removed += sizeOf(p);
    fs.rmSync(p, { recursive: true, force: true });
  }
}

console.log(`prune-deploy: ${mb(before)} -> ${mb(sizeOf(root))} (removed ${mb(removed)})`);
console.log(`prune-deploy: dropped ${dropped.length} store packages: ${dropped.join(" ")}`);
