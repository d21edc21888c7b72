import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import ts from "typescript";

/**
 * Finds the repository paths that documents and code comments name, so that a test
 * (doc-paths.test.ts) fails when one of them names a file that is not there. A path is
 * recognised by its first folder (`apps/`, `packages/`, `tools/`, `bench/`, `docs/`, `docker/`,
 * `prisma/`, `.ci/`, `.github/`); `src/...` and `test/...` are relative to the package that
 * holds the text, or, in a document at the root, to the last package the same line names.
 * Patterns and placeholders (`apps/*`, `{a,b}.ts`, `<name>.ts`, `${dir}`) are not files, and
 * what git ignores (build output, local data, `docker/.env`) is made on the reader's machine:
 * both are skipped.
 */

const TOP = ["apps", "packages", "tools", "bench", "docs", "docker", "prisma", ".ci", ".github"];
const PATH = new RegExp(`(?<![\\w./@:-])((?:${TOP.map((t) => t.replace(".", "\\.")).join("|")}|src|test)/[\\w@.\\-/*{}<>$]*)`, "g");
const NOT_A_FILE = /[*{}<>$]/;
const PACKAGE_ON_LINE = /(?:apps|packages|tools)\/[\w-]+/g;

/** Folders walked for documents and sources (build output, installs and generated code are not). */
const SKIP = new Set(["node_modules", "dist", ".turbo", ".data", "generated", "migrations"]);
const SOURCE = /\.(ts|tsx|mts|cts|js|mjs|cjs)$/;

export interface Named {
  /** The file whose text names the path. */
  file: string;
  line: number;
  /** The path as written. */
  path: string;
  /** Where it resolves from the repository root. */
  resolved: string;
}

function walk(root: string, dir: string, out: string[]): string[] {
  if (!existsSync(path.join(root, dir))) return out;
  for (const entry of readdirSync(path.join(root, dir), { withFileTypes: true })) {
    if (SKIP.has(entry.name)) continue;
    const rel = dir === "." ? entry.name : `${dir}/${entry.name}`;
    if (entry.isDirectory()) walk(root, rel, out);
    else out.push(rel);
  }
  return out;
}

/** The documents and sources to check, relative to `root`. */
export function filesToCheck(root: string): { docs: string[]; sources: string[] } {
  const tree = ["apps", "packages", "tools", "bench", ".ci", "docker"].flatMap((dir) => walk(root, dir, []));
  const top = readdirSync(root, { withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => e.name);
  const docs = [
    ...top.filter((f) => f.endsWith(".md")),
    ...readdirSync(path.join(root, "docs"))
      .filter((f) => f.endsWith(".md"))
      .map((f) => `docs/${f}`),
    ...tree.filter((f) => f.endsWith(".md")),
  ];
  const sources = [...top, ...tree].filter((f) => SOURCE.test(f));
  return { docs, sources };
}

/** The text of every comment of a JavaScript or TypeScript source, each at its offset. */
export function commentsOf(fileName: string, text: string): Array<{ pos: number; text: string }> {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TSX);
  const seen = new Map<number, string>();
  const collect = (ranges: ts.CommentRange[] | undefined) => {
    for (const r of ranges ?? []) seen.set(r.pos, text.slice(r.pos, r.end));
  };
  const visit = (node: ts.Node) => {
    collect(ts.getLeadingCommentRanges(text, node.getFullStart()));
    collect(ts.getTrailingCommentRanges(text, node.getEnd()));
    for (const child of node.getChildren(source)) visit(child);
  };
  visit(source);
  return [...seen].map(([pos, t]) => ({ pos, text: t }));
}

/** Names the root .gitignore lists as plain names (`dist/`, `.env`), besides node_modules. */
const ignoredByRoot = new Map<string, Set<string>>();
function ignoredNames(root: string): Set<string> {
  const known = ignoredByRoot.get(root);
  if (known) return known;
  const file = path.join(root, ".gitignore");
  const lines = existsSync(file) ? readFileSync(file, "utf8").split("\n") : [];
  const plain = lines.map((l) => l.trim().replace(/\/$/, "")).filter((l) => l && !/[*/!#]/.test(l));
  const names = new Set(["node_modules", "dist", ...plain]);
  ignoredByRoot.set(root, names);
  return names;
}

function packageRoot(root: string, file: string): string | undefined {
  for (let dir = path.posix.dirname(file); dir !== "."; dir = path.posix.dirname(dir)) {
    if (existsSync(path.join(root, dir, "package.json"))) return dir;
  }
  return undefined;
}

/** The repository paths named in `text` (a document, or one comment at `offset` of `file`). */
export function pathsIn(root: string, file: string, text: string, whole = text, offset = 0): Named[] {
  const found: Named[] = [];
  const ignored = ignoredNames(root);
  for (const m of text.matchAll(PATH)) {
    const written = m[1] ?? "";
    if (NOT_A_FILE.test(written) || written.split("/").some((part) => ignored.has(part))) continue;
    const p = written.replace(/[.\-:]+$/, "");
    let resolved = p;
    if (/^(src|test)\//.test(p)) {
      if (!/^(src|test)\/[^/]/.test(p)) continue; // the folder's name alone (`test/`), not a file
      const at = offset + (m.index ?? 0);
      const lineText = whole.slice(whole.lastIndexOf("\n", at) + 1, at);
      const base = packageRoot(root, file) ?? [...lineText.matchAll(PACKAGE_ON_LINE)].pop()?.[0];
      resolved = base ? `${base}/${p}` : `?/${p}`;
    }
    const line = whole.slice(0, offset + (m.index ?? 0)).split("\n").length;
    found.push({ file, line, path: p, resolved });
  }
  return found;
}

/** Relative markdown links (`[text](../apps/api/README.md#x)`), resolved from the document's folder. */
export function linksIn(file: string, text: string): Named[] {
  const found: Named[] = [];
  for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    const target = (m[1] ?? "").split("#")[0] ?? "";
    if (!target || /^[a-z][a-z+.-]*:/i.test(target)) continue;
    const line = text.slice(0, m.index).split("\n").length;
    found.push({ file, line, path: target, resolved: path.posix.normalize(path.posix.join(path.posix.dirname(file), decodeURI(target))) });
  }
  return found;
}

/** Every named path and link of the repository at `root` that does not exist. */
export function missingPaths(root: string): Named[] {
  const { docs, sources } = filesToCheck(root);
  const named: Named[] = [];
  for (const file of docs) {
    const text = readFileSync(path.join(root, file), "utf8");
    named.push(...pathsIn(root, file, text), ...linksIn(file, text));
  }
  for (const file of sources) {
    const text = readFileSync(path.join(root, file), "utf8");
    for (const c of commentsOf(file, text)) named.push(...pathsIn(root, file, c.text, text, c.pos));
  }
  return named.filter((n) => n.resolved.startsWith("?/") || !existsSync(path.join(root, n.resolved)));
}
