// Checks the README's shell blocks without running them (`node --test .ci/`): every `pnpm <name>`
// it shows is a script of the root package.json that pnpm does not answer itself (pnpm owns
// `doctor`, for one: `pnpm doctor` runs pnpm's check, never the script), and the walk
// (.ci/readme-walk.mjs) knows what to do with every line.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { classify, pnpmCommands, shellLines } from "./readme.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const readme = readFileSync(path.join(root, "README.md"), "utf8");
const lines = shellLines(readme);
/** Shell lines and inline code spans (`pnpm diagnose`): every command the README shows. */
const shown = [...lines, ...[...readme.matchAll(/`([^`\n]+)`/g)].map((m) => m[1])];
const scripts = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")).scripts;

/** True when pnpm has a command of this name (it then runs that, not a script of the same name). */
function pnpmOwns(name) {
  const out = execFileSync("pnpm", ["help", name], { cwd: root, encoding: "utf8" });
  return !out.includes(`No results for "${name}"`);
}

test("the README shows the quick start, the curl flow and the diagnostics in shell blocks", () => {
  const commands = pnpmCommands(lines);
  for (const name of ["start", "test", "diagnose"]) assert.ok(commands.includes(name), `pnpm ${name} is missing`);
  assert.ok(
    lines.some((l) => l.includes("curl")),
    "the curl walk-through is missing",
  );
});

test("the first line installs the pnpm of packageManager with npm, and the walk runs it", () => {
  const version = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")).packageManager.split("@")[1];
  const first = lines[0] ?? "";
  assert.match(first, /^npm install -g pnpm@\S+/, `the README's first shell line is not npm install -g pnpm@…: ${first}`);
  assert.equal(first.match(/pnpm@(\S+)/)?.[1], version, "the README installs another pnpm than packageManager names");
  assert.equal(classify(first).kind, "run", "the walk would skip the install line the README shows");
  assert.ok(!lines.some((l) => /^\s*corepack\b/.test(l)), "corepack is the alternative in prose, not a line to run");
});

test("every pnpm command in the README is a root script pnpm does not own", () => {
  for (const name of pnpmCommands(shown)) {
    assert.ok(scripts[name], `pnpm ${name}: no such script in package.json`);
    // pnpm runs the `test` script through its own command of that name; any other name it owns hides the script.
    if (name !== "test") assert.equal(pnpmOwns(name), false, `pnpm ${name} runs pnpm's own command, not the script: rename it`);
  }
});

test("the curl flow keeps its cookie jar out of the working directory", () => {
  for (const line of lines.filter((l) => /\bcurl\b/.test(l))) {
    for (const m of line.matchAll(/\s-[bc]\s+(\S+)/g)) assert.match(m[1], /^"?\$/, `cookie jar ${m[1]} is a file in the working directory`);
  }
});

test("the walk knows what to do with every line", () => {
  assert.deepEqual(shellLines("```sh\npnpm install\npnpm start # x\ncurl a \\\n  b\n# c\n```\n```text\npnpm nope\n```\n"), [
    "pnpm install",
    "pnpm start # x",
    "curl a \\\n  b",
  ]);
  assert.equal(classify("pnpm start   # serves").kind, "background");
  assert.equal(classify("corepack enable && corepack prepare pnpm@10 --activate").kind, "skip");
  assert.equal(classify("npm install -g pnpm@10.34.9   # pnpm").kind, "run");
  assert.equal(classify("pnpm test").kind, "skip");
  assert.equal(classify("pnpm diagnose").kind, "run");
});
