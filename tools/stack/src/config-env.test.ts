import { describe, expect, it } from "vitest";
import { launcherVariables, SET_FOR_SERVICES } from "./config.js";
import { serviceVariables } from "./config-doc.js";
import { envReads, nameMatcher, scanSources, sourceDirs } from "./config-env.js";

/** Variables of the platform, the shell or the test runner, which no schema of ours describes. */
const WELL_KNOWN = new Set(["NODE_ENV", "CI", "VITEST", "HOME", "PATH", "TZ", "TERM", "PWD", "USER", "TMPDIR", "FORCE_COLOR", "NO_COLOR"]);

/** Index expressions the scan cannot name, with the variables each one reads. */
const DYNAMIC: Record<string, string[]> = {
  "packages/db/src/cli/migrate.ts": ["IDENTITY_DATABASE_PASSWORD", "API_DATABASE_PASSWORD"],
  // text(env, key): the literal names are scanned; the computed ones are OIDC_<ID>_*.
  "apps/identity/src/services/oidc/config.ts": [
    "OIDC_ID_ISSUER",
    "OIDC_ID_CLIENT_ID",
    "OIDC_ID_CLIENT_SECRET",
    "OIDC_ID_NAME",
    "OIDC_ID_SCOPES",
  ],
};

/**
 * The launcher's test helper: it builds the environment of a `pnpm start` a test runs (deleting
 * variables by name), it reads none itself.
 */
const LAUNCHER_EXCLUDE = new Set(["tools/stack/src/stop-helpers.ts"]);

/** The names `docs` lists that match `name` (docs/configuration.md's rows). */
const documentedBy = (docs: Array<{ name: string }>) => {
  const matchers = docs.map((d) => nameMatcher(d.name));
  return (name: string) => WELL_KNOWN.has(name) || matchers.some((m) => m.test(name));
};

/** Every variable `scan` reads that `known` rejects, as `file: NAME`. */
function undocumented(scan: Map<string, { names: string[]; dynamic: string[] }>, known: (name: string) => boolean): string[] {
  const missing: string[] = [];
  for (const [file, reads] of scan) {
    const names = [...reads.names, ...(reads.dynamic.length ? (DYNAMIC[file] ?? reads.dynamic.map((d) => `[${d}]`)) : [])];
    for (const name of names) if (!known(name)) missing.push(`${file}: ${name}`);
  }
  return missing;
}

describe("every variable the code reads is in a schema (docs/configuration.md)", () => {
  it("finds member, index, helper and destructured reads, and flags computed ones", () => {
    const source = [
      "const a = process.env.FIRST_ONE;",
      "const b = options.env?.SECOND;",
      'const c = process.env["THIRD"];',
      'const d = text(env, "FOURTH");',
      "const { FIFTH, SIXTH: sixth, ...rest } = process.env;",
      "const e = import.meta.env.VITE_SEVENTH;",
      "const f = process.env[prefix + name];",
      "const lower = env.notAVariable;",
    ].join("\n");
    expect(envReads(source)).toEqual({
      names: ["FIRST_ONE", "SECOND", "VITE_SEVENTH", "THIRD", "FOURTH", "FIFTH", "SIXTH"],
      dynamic: ["prefix + name"],
    });
  });

  it("catches a variable the launcher reads but no schema lists", () => {
    const known = documentedBy(launcherVariables);
    const scan = new Map([
      ["tools/stack/src/start.ts", envReads("const port = Number(process.env.WEB_PORT);\nconst x = process.env.NOT_IN_A_SCHEMA;")],
    ]);
    expect(undocumented(scan, known)).toEqual(["tools/stack/src/start.ts: NOT_IN_A_SCHEMA"]);
  });

  it("matches the table's grouped and patterned names", () => {
    const oidc = nameMatcher("OIDC_<ID>_ISSUER / _CLIENT_ID / _CLIENT_SECRET / _SCOPES / _NAME");
    expect(["OIDC_ACME_ISSUER", "OIDC_MY_IDP_CLIENT_SECRET", "OIDC_X_NAME"].every((n) => oidc.test(n))).toBe(true);
    expect(oidc.test("OIDC_ACME_TOKEN")).toBe(false);
    expect(nameMatcher("GITHUB_CLIENT_ID / GITHUB_CLIENT_SECRET").test("GITHUB_CLIENT_SECRET")).toBe(true);
  });

  it("the launcher (tools/stack/src, tools/stack/bin) reads only its schemas' variables and the services' it passes on", async () => {
    const known = documentedBy([...launcherVariables, ...(await serviceVariables())]);
    const scan = await scanSources(["tools/stack/src", "tools/stack/bin"], LAUNCHER_EXCLUDE);
    expect(scan.size).toBeGreaterThan(3); // the scan sees the launcher's sources
    expect(undocumented(scan, known)).toEqual([]);
  });

  it("the services and packages (apps/*/src, packages/*/src) read only the services' schemas' variables", async () => {
    // The launcher's own rows are not theirs: only what it sets for them and the commands' (migrate, build).
    const theirs = launcherVariables.filter((v) => v.service === SET_FOR_SERVICES || !/`pnpm (start|test)`/.test(v.service));
    const known = documentedBy([...theirs, ...(await serviceVariables())]);
    const scan = await scanSources([...(await sourceDirs("apps", "src")), ...(await sourceDirs("packages", "src"))]);
    expect(scan.size).toBeGreaterThan(4);
    expect(undocumented(scan, known)).toEqual([]);
  });
});
