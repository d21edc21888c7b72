import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const here = path.dirname(fileURLToPath(import.meta.url));
const src = path.join(here, "..", "src");

describe("the client stays browser-safe", () => {
  it("imports only @app/contracts, zod and its own modules", async () => {
    const files = (await readdir(src)).filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts"));
    expect(files.length).toBeGreaterThan(5);
    const imported = new Set<string>();
    for (const file of files) {
      const text = await readFile(path.join(src, file), "utf8");
      for (const match of text.matchAll(/\bfrom\s+"([^"]+)"|\bimport\s*\(\s*"([^"]+)"\s*\)/g)) imported.add(match[1] ?? match[2] ?? "");
    }
    const foreign = [...imported].filter((spec) => !spec.startsWith("./") && spec !== "@app/contracts" && spec !== "zod");
    expect(foreign).toEqual([]);
  });

  it("declares no dependency besides @app/contracts and zod", async () => {
    const pkg = JSON.parse(await readFile(path.join(here, "..", "package.json"), "utf8")) as { dependencies: Record<string, string> };
    expect(Object.keys(pkg.dependencies).sort()).toEqual(["@app/contracts", "zod"]);
  });
});
