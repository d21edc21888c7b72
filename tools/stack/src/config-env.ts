// Finds the environment variables source code reads, so config-env.test.ts can hold them against
// the schemas docs/configuration.md is generated from (config-doc.ts): a variable read in code
// but missing from every schema fails the test instead of going undocumented.
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { ROOT } from "./paths.js";

/** What one source reads: variable names, and index expressions the scan cannot name. */
export interface EnvReads {
  names: string[];
  dynamic: string[];
}

const NAME = "[A-Z][A-Z0-9_]*";
/** Member reads: `process.env.<name>`, `env?.<name>`, `import.meta.env.<name>`. */
const MEMBER = new RegExp(`\\benv\\??\\.(${NAME})\\b`, "g");
/** Index reads with a literal name. */
const INDEX = new RegExp(`\\benv\\[\\s*(["'\`])(${NAME})\\1\\s*\\]`, "g");
/** Index reads with anything else inside. */
const DYNAMIC = new RegExp(`\\benv\\[(?!\\s*(["'\`])${NAME}\\1\\s*\\])([^\\]]*)\\]`, "g");
/** A helper handed the environment and a literal name (apps/identity/src/services/oidc/config.ts). */
const HELPER = new RegExp(`\\(\\s*env\\s*,\\s*(["'\`])(${NAME})\\1`, "g");
/** Destructuring the environment: `const { <name>, <name>: local, ...rest } = process.env`. */
const DESTRUCTURE = /\{([^{}]*)\}\s*=\s*(?:process\.)?env\b/g;

/** The variables `source` reads, in order of first appearance. */
export function envReads(source: string): EnvReads {
  const names = new Set<string>();
  for (const m of source.matchAll(MEMBER)) names.add(m[1] ?? "");
  for (const m of source.matchAll(INDEX)) names.add(m[2] ?? "");
  for (const m of source.matchAll(HELPER)) names.add(m[2] ?? "");
  for (const m of source.matchAll(DESTRUCTURE)) {
    for (const part of (m[1] ?? "").split(",")) {
      const key = part.split(":")[0]?.trim() ?? "";
      if (new RegExp(`^${NAME}$`).test(key)) names.add(key);
    }
  }
  const dynamic = [...source.matchAll(DYNAMIC)].map((m) => (m[2] ?? "").trim());
  return { names: [...names], dynamic };
}

/** True for tests and the code only tests run (test kits, fixtures). */
function testOnly(file: string): boolean {
  return /\.test\.tsx?$|\.d\.ts$|(^|\/)(test|tests|testing|fixtures)(\/|\.ts$)/.test(file);
}

async function walk(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  const files = await Promise.all(
    entries.map(async (entry) => {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) return entry.name === "node_modules" || entry.name === "dist" ? [] : walk(full);
      return /\.(ts|tsx|mjs|js)$/.test(entry.name) ? [full] : [];
    }),
  );
  return files.flat();
}

/** Every non-test source under `dirs` (relative to the repository root), with what it reads. */
export async function scanSources(dirs: string[], exclude: ReadonlySet<string> = new Set()): Promise<Map<string, EnvReads>> {
  const files = (await Promise.all(dirs.map((dir) => walk(path.join(ROOT, dir))))).flat();
  const result = new Map<string, EnvReads>();
  for (const file of files.sort()) {
    const relative = path.relative(ROOT, file).split(path.sep).join("/");
    if (testOnly(relative) || exclude.has(relative)) continue;
    const reads = envReads(await readFile(file, "utf8"));
    if (reads.names.length || reads.dynamic.length) result.set(relative, reads);
  }
  return result;
}

/** The folders of a glob-free pattern list: `apps/*\/src` → every app's src. */
export async function sourceDirs(parent: string, child: string): Promise<string[]> {
  const entries = await readdir(path.join(ROOT, parent), { withFileTypes: true });
  return entries.filter((e) => e.isDirectory()).map((e) => `${parent}/${e.name}/${child}`);
}

/**
 * A documented name (docs/configuration.md's first column, without backticks) as a matcher:
 * `A / B` lists several, `OIDC_<ID>_ISSUER / _CLIENT_ID` shares the first one's stem, `<ID>` is
 * any id.
 */
export function nameMatcher(documented: string): RegExp {
  const parts = documented.split("/").map((p) => p.trim());
  const first = parts[0] ?? "";
  const stem = first.replace(/_[A-Z0-9]+$/, "");
  const names = parts.map((p) => (p.startsWith("_") ? stem + p : p));
  const escaped = names.map((n) => n.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replaceAll("<ID>", "[A-Z0-9_]+"));
  return new RegExp(`^(?:${escaped.join("|")})$`);
}
