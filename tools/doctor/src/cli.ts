#!/usr/bin/env node
// `pnpm doctor`: the contract's diagnostics as a command. Exit status 1 when a check fails.
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { formatReport } from "./checks.js";
import { runDoctor } from "./doctor.js";
import { parseArgs, USAGE } from "./options.js";

function repoRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (dir !== path.dirname(dir)) {
    if (existsSync(path.join(dir, "pnpm-workspace.yaml"))) return dir;
    dir = path.dirname(dir);
  }
  return process.cwd();
}

const parsed = parseArgs(process.argv.slice(2), process.env, repoRoot());
if (parsed.kind === "help") {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
if (parsed.kind === "error") {
  process.stderr.write(`doctor: ${parsed.message}\n\n${USAGE}\n`);
  process.exit(2);
}
const { options, notes } = parsed;
process.stdout.write(`doctor: ${options.baseUrl} (web origin ${options.origin})\n`);
for (const note of notes) process.stdout.write(`note: ${note}\n`);
const results = await runDoctor(options);
process.stdout.write(formatReport(results));
process.exit(results.some((r) => r.status === "fail") ? 1 : 0);
