import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { DOC, documented, variablesTable } from "./config-doc.js";

describe("docs/configuration.md", () => {
  it("lists every variable of every service's schema and the launcher's, as the schemas describe it", async () => {
    const text = await readFile(DOC, "utf8");
    // On failure: `pnpm build && node tools/stack/dist/config-doc.js` regenerates the tables.
    expect(text).toBe(await documented(text));
  });

  it("merges a variable several services read into one row", () => {
    const table = variablesTable([
      { name: "PORT", service: "identity", default: "3001", description: "listening port" },
      { name: "PORT", service: "api", default: "3002", description: "listening port" },
      { name: "A", service: "api", default: "unset", description: "first" },
    ]);
    const [, , first, port] = table.split("\n");
    expect(first).toMatch(/^\| `A` +\| api +\| unset +\| first +\|$/);
    expect(port).toMatch(/^\| `PORT` +\| identity, api \| 3001 \(identity\); 3002 \(api\) \| listening port \|$/);
  });
});
