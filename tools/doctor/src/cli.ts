#!/usr/bin/env node
// `pnpm diagnose` (pnpm owns the name `doctor`): the contract's diagnostics as a command.
// Exit status 1 when a check fails; warnings do not fail the run.
import { formatReport } from "./checks.js";
import { runDoctor } from "./doctor.js";
import { findRepoRoot } from "./local-stack.js";
import { parseArgs, USAGE } from "./options.js";

const parsed = parseArgs(process.argv.slice(2), process.env, findRepoRoot());
if (parsed.kind === "help") {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
if (parsed.kind === "error") {
  process.stderr.write(`diagnose: ${parsed.message}\n\n${USAGE}\n`);
  process.exit(2);
}
const { options, notes } = parsed;
process.stdout.write(`diagnose: ${options.baseUrl} (web origin ${options.origin})\n`);
for (const note of notes) process.stdout.write(`note: ${note}\n`);
const later: string[] = [];
const results = await runDoctor({ ...options, onNote: (line) => later.push(line) });
process.stdout.write(formatReport(results));
for (const note of later) process.stdout.write(`note: ${note}\n`);
process.exit(results.some((r) => r.status === "fail") ? 1 : 0);
