import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { commentsOf, linksIn, missingPaths, pathsIn } from "./doc-paths.js";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");

describe("files named by documents and code comments exist", () => {
  it("every path in docs/*.md, the READMEs and the comments of apps, packages, tools, bench and .ci is a file or folder of the repository", () => {
    const missing = missingPaths(REPO).map((n) => `${n.file}:${n.line} names ${n.path} (${n.resolved})`);
    expect(missing).toEqual([]);
  }, 60_000);
});

describe("the checker", () => {
  const root = mkdtempSync(path.join(os.tmpdir(), "doc-paths-"));
  const put = (file: string, text: string) => {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    writeFileSync(path.join(root, file), text);
  };
  put("apps/api/package.json", "{}");
  put("apps/api/src/tasks/routes.ts", "export {};\n");
  put("docs/a.md", "");
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it("reports a path that is gone, by its file and line, and keeps one that exists", () => {
    put("docs/x.md", "line\nsee `apps/api/src/routes/tasks.ts` and apps/api/src/tasks/routes.ts.\n");
    expect(missingPaths(root).map((n) => `${n.file}:${n.line} ${n.resolved}`)).toEqual(["docs/x.md:2 apps/api/src/routes/tasks.ts"]);
    rmSync(path.join(root, "docs/x.md"));
  });

  it("resolves src/ from the package holding the text, or from the package named on the line", () => {
    expect(pathsIn(root, "apps/api/README.md", "`src/tasks/routes.ts`")[0]?.resolved).toBe("apps/api/src/tasks/routes.ts");
    expect(pathsIn(root, "README.md", "| `apps/api` | routes in `src/tasks/` |")[1]?.resolved).toBe("apps/api/src/tasks/");
    expect(pathsIn(root, "README.md", "a bare `src/x.ts`")[0]?.resolved).toBe("?/src/x.ts");
  });

  it("skips patterns, placeholders, build output, URLs and a folder's bare name", () => {
    const text =
      "apps/*/README.md packages/{a,b}.ts src/<name>.ts $" +
      "{dir}/x apps/api/dist/server.js https://example.com/apps/nope @prisma/adapter-pg test/";
    expect(pathsIn(root, "apps/api/src/x.ts", text)).toEqual([]);
  });

  it("reads comments, not strings or regular expressions", () => {
    const source = [
      'const a = "apps/in-a-string.ts"; // apps/line-comment.ts',
      "const re = /\\/\\*apps\\/in-a-regex/; /* apps/block-comment.ts */",
      "const t = `apps/$" + "{a}/in-a-template`;",
    ].join("\n");
    expect(commentsOf("x.ts", source).map((c) => c.text)).toEqual(["// apps/line-comment.ts", "/* apps/block-comment.ts */"]);
  });

  it("resolves a relative markdown link from the document's folder and ignores URLs and anchors", () => {
    const links = linksIn("docs/x.md", "[a](a.md#top) [r](../apps/api/README.md) [u](https://x.dev/y) [h](#here)");
    expect(links.map((l) => l.resolved)).toEqual(["docs/a.md", "apps/api/README.md"]);
  });
});
