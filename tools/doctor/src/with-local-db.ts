#!/usr/bin/env node
// Runs one of the repository's Node commands with DATABASE_URL taken from `pnpm start`'s local
// stack when it is unset, as `pnpm diagnose` finds it (./local-stack.ts), so that
// `pnpm admin:grant ann@example.com` needs no hand-typed connection string:
//   node tools/doctor/dist/with-local-db.js <script.js relative to the repository> [args...]
import { spawn } from "node:child_process";
import path from "node:path";
import { findRepoRoot, localDatabaseEnv } from "./local-stack.js";

const [script, ...args] = process.argv.slice(2);
if (!script) {
  process.stderr.write("usage: node tools/doctor/dist/with-local-db.js <script.js> [args...]\n");
  process.exit(2);
}
const root = findRepoRoot();
const { env, note } = localDatabaseEnv(process.env, root);
if (note) process.stderr.write(`note: ${note}\n`);
const child = spawn(process.execPath, [path.resolve(root, script), ...args], { env, stdio: "inherit" });
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, () => child.kill(signal));
child.once("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
