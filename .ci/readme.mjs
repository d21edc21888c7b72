// What the README's shell blocks say, for .ci/readme-walk.mjs (which runs them) and
// .ci/readme.test.mjs (which checks them without running anything).

/** The logical lines (backslash continuations joined) of every ```sh fence, in order. */
export function shellLines(markdown) {
  const lines = [];
  let inSh = false;
  let pending = "";
  for (const raw of markdown.split("\n")) {
    const fence = raw.match(/^\s*```\s*(\S*)/);
    if (fence) {
      inSh = !inSh && fence[1] === "sh";
      continue;
    }
    if (!inSh) continue;
    if (raw.endsWith("\\")) {
      pending += `${raw}\n`;
      continue;
    }
    const line = pending + raw;
    pending = "";
    if (line.trim() && !line.trim().startsWith("#")) lines.push(line);
  }
  return lines;
}

/** What the walk does with a line: run it, run it in the background, or leave it (with why). */
export function classify(line) {
  const cmd = line.replace(/\s+#.*$/, "").trim();
  // `npm install -g pnpm@<version>` runs as shown: the line a newcomer runs first must work here too.
  if (/^corepack /.test(cmd)) return { kind: "skip", why: "corepack puts its shim in place of the global pnpm: the README's alternative" };
  if (/^pnpm (test|run test)\b/.test(cmd)) return { kind: "skip", why: "runs next in .ci/run, in this checkout" };
  if (/^pnpm dev\b/.test(cmd)) return { kind: "skip", why: "long-running development loop" };
  if (/^pnpm start\b/.test(cmd)) return { kind: "background" };
  return { kind: "run" };
}

/** The `pnpm <name>` commands of the given lines, without pnpm's own install/exec/--filter. */
export function pnpmCommands(lines) {
  const names = new Set();
  for (const line of lines) {
    for (const m of line.matchAll(/(?:^|[;&|]\s*)pnpm\s+([a-z][\w:-]*)/g)) {
      if (!["install", "i", "exec", "dlx"].includes(m[1])) names.add(m[1]);
    }
  }
  return [...names];
}
