/**
 * A small repository laid out like this one, where every rule of boundaries.cjs is broken once
 * (and a few allowed imports sit beside the broken ones). boundaries.test.ts writes it to a
 * temporary folder, so none of it is part of the real cruise. Each file says which rule it breaks.
 */
const manifest = (name: string, entries: Record<string, string> | undefined, main?: string): string =>
  JSON.stringify({ name, ...(main ? { main } : {}), ...(entries ? { exports: entries } : {}) });

export const FIXTURE: Readonly<Record<string, string>> = {
  "apps/api/package.json": manifest("@fixture/api", { ".": "./dist/server.js", "./embed": "./dist/embed.js" }, "dist/server.js"),
  "apps/api/src/server.ts": `export const api = "api";\n`,
  "apps/api/src/embed.ts": `export { api } from "./server.js";\n`,
  "apps/api/src/app.ts": `export const app = "app";\n`,
  // api-not-to-identity (by package name) and apps-not-to-other-apps
  "apps/api/src/uses-identity.ts": `import { identity } from "@fixture/identity";\nexport const seen = identity;\n`,
  // api-folders-not-circular: tasks/ → events/ → tasks/, though no module imports itself back
  "apps/api/src/tasks/routes.ts": `import { hub } from "../events/hub.js";\nimport { guard } from "../entry/guard.js";\nexport const routes = [hub, guard];\n`,
  "apps/api/src/tasks/service.ts": `export const service = "tasks";\n`,
  "apps/api/src/events/hub.ts": `import { service } from "../tasks/service.js";\nexport const hub = service;\n`,
  // allowed: a feature imports entry/, which imports no feature
  "apps/api/src/entry/guard.ts": `export const guard = "bearer";\n`,
  "apps/identity/package.json": manifest("@fixture/identity", undefined, "dist/server.js"),
  "apps/identity/src/server.ts": `export const identity = "identity";\n`,
  "apps/gateway/package.json": manifest("@fixture/gateway", undefined, "dist/server.js"),
  // apps-not-to-other-apps, and only-entry-points-of-other-packages (app.ts is no entry)
  "apps/gateway/src/server.ts": `import { app } from "../../api/src/app.js";\nexport const gateway = app;\n`,

  "packages/lib/package.json": manifest("@fixture/lib", { ".": "./dist/index.js" }),
  // packages-not-to-apps
  "packages/lib/src/index.ts": `import { api } from "../../../apps/api/src/server.js";\nexport const lib = api;\n`,
  // packages-not-to-tools
  "packages/lib/src/uses-tool.ts": `import { stack } from "@fixture/stack";\nexport const tool = stack;\n`,
  // allowed: a package's tests may start the stack
  "packages/lib/test/uses-tool.test.ts": `import { stack } from "@fixture/stack";\nexport const tool = stack;\n`,
  "tools/stack/package.json": manifest("@fixture/stack", { ".": "./dist/index.js" }),
  "tools/stack/src/index.ts": `export const stack = "stack";\n`,

  "packages/contracts/package.json": manifest("@fixture/contracts", { ".": "./dist/index.js" }),
  // allowed: zod and the package's own files
  "packages/contracts/src/index.ts": `import { z } from "zod";\nimport { limit } from "./limits.js";\nexport const name = z.string().max(limit);\n`,
  "packages/contracts/src/limits.ts": `export const limit = 10;\n`,
  // contracts-only-zod, three ways: a node built-in, another npm package, a workspace package
  "packages/contracts/src/uses-node.ts": `import { readFileSync } from "node:fs";\nexport const read = readFileSync;\n`,
  "packages/contracts/src/uses-jose.ts": `import { decodeJwt } from "jose";\nexport const decode = decodeJwt;\n`,
  "packages/contracts/src/uses-package.ts": `import { lib } from "@fixture/lib";\nexport const other = lib;\n`,
  // allowed: vitest in a test file
  "packages/contracts/src/index.test.ts": `import { expect } from "vitest";\nexport const check = expect;\n`,
  // contracts-tests-only-test-libraries
  "packages/contracts/src/jose.test.ts": `import { decodeJwt } from "jose";\nexport const decode = decodeJwt;\n`,

  "packages/auth-verify/package.json": manifest("@fixture/auth-verify", { ".": "./dist/index.js" }),
  // allowed: jose, node built-ins and the package's own files
  "packages/auth-verify/src/index.ts": `import { createHash } from "node:crypto";\nimport { jwtVerify } from "jose";\nimport { code } from "./errors.js";\nexport const verify = [createHash, jwtVerify, code];\n`,
  "packages/auth-verify/src/errors.ts": `export const code = "ERR";\n`,
  // auth-verify-only-jose: another npm package, and a test library outside tests
  "packages/auth-verify/src/uses-zod.ts": `import { z } from "zod";\nexport const schema = z;\n`,
  "packages/auth-verify/src/uses-vitest.ts": `import { expect } from "vitest";\nexport const check = expect;\n`,
  // allowed: fast-check and vitest in a test file
  "packages/auth-verify/src/verify.test.ts": `import fc from "fast-check";\nimport { expect } from "vitest";\nimport { verify } from "./index.js";\nexport const all = [fc, expect, verify];\n`,
  // auth-verify-tests-only-test-libraries
  "packages/auth-verify/src/test-fixtures.ts": `import { z } from "zod";\nexport const schema = z;\n`,

  "packages/cycle/package.json": manifest("@fixture/cycle", { ".": "./dist/a.js" }),
  // no-circular: a → b → a
  "packages/cycle/src/a.ts": `import { b } from "./b.js";\nexport const a = () => b();\n`,
  "packages/cycle/src/b.ts": `import { a } from "./a.js";\nexport const b = () => a;\n`,

  "bench/package.json": manifest("@fixture/bench", undefined),
  // allowed: an entry point the API publishes
  "bench/src/entry.ts": `import { api } from "@fixture/api/embed";\nexport const used = api;\n`,
  // only-entry-points-of-other-packages: another package's src/ and dist/ (the test writes the dist file)
  "bench/src/deep-src.ts": `import { app } from "../../apps/api/src/app.js";\nexport const used = app;\n`,
  "bench/src/deep-dist.ts": `import { identity } from "../../apps/identity/dist/server.js";\nexport const used = identity;\n`,
  "apps/identity/dist/server.js": `export const identity = "identity";\n`,
  // not-to-unresolvable: a subpath the package does not export
  "bench/src/deep-by-name.ts": `import { app } from "@fixture/api/dist/app.js";\nexport const used = app;\n`,
};
