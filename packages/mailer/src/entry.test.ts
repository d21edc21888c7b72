import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const scratch = mkdtempSync(path.join(tmpdir(), "mailer-entry-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A resolve hook (module.register) that writes every URL the ES module loader resolves to a file. */
const RECORD_HOOK = `import { appendFileSync } from "node:fs";
let log;
export function initialize(data) { log = data.log; }
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  appendFileSync(log, result.url + "\\n");
  return result;
}`;

/**
 * Every module a fresh Node process loads to import `entry` of the built package (as the services
 * load it): what the ES module loader resolved, and the CommonJS files (require.cache) of the
 * packages it loads through require.
 */
function modulesLoadedBy(entry: string): string[] {
  const log = path.join(scratch, `${entry.replaceAll("/", "-")}.log`);
  const script = `import { createRequire, register } from "node:module";
import { readFileSync } from "node:fs";
register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(RECORD_HOOK)}`)}, { data: { log: ${JSON.stringify(log)} } });
await import(${JSON.stringify(new URL(`../dist/${entry}`, import.meta.url).href)});
const resolved = readFileSync(${JSON.stringify(log)}, "utf8").split("\\n").filter(Boolean);
process.stdout.write(JSON.stringify([...resolved, ...Object.keys(createRequire(import.meta.url).cache)]));`;
  const out = execFileSync(process.execPath, ["--input-type=module", "-e", script], {
    cwd: fileURLToPath(new URL("..", import.meta.url)),
    encoding: "utf8",
  });
  return JSON.parse(out) as string[];
}

const fromPackage = (name: string) => (file: string) => new RegExp(`[\\\\/]node_modules[\\\\/]${name}[\\\\/]`).test(file);

describe("entry points", () => {
  it("the main entry (what identity runs in production) loads no part of the SMTP catcher", () => {
    const loaded = modulesLoadedBy("index.js");
    expect(loaded.some(fromPackage("nodemailer"))).toBe(true);
    expect(loaded.filter(fromPackage("smtp-server"))).toEqual([]);
    expect(loaded.filter(fromPackage("mailparser"))).toEqual([]);
  });

  it("the catcher entry loads smtp-server and mailparser (so the check above can see them)", () => {
    const loaded = modulesLoadedBy("catcher/index.js");
    expect(loaded.some(fromPackage("smtp-server"))).toBe(true);
    expect(loaded.some(fromPackage("mailparser"))).toBe(true);
  });
});
