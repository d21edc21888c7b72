import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

// The example alert rules of docs/operations.md#metrics are checked by Prometheus' own promtool
// (Debian's, with the prometheus package), and name only series the section's table lists.

const PROMTOOL = process.env.PROMTOOL_PATH ?? "/usr/bin/promtool";
const OPERATIONS = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "docs", "operations.md");

/** The `## Metrics` section of docs/operations.md. */
function metricsSection(): string {
  const doc = readFileSync(OPERATIONS, "utf8");
  const start = doc.indexOf("\n## Metrics\n");
  expect(start, "docs/operations.md has a ## Metrics section").toBeGreaterThan(-1);
  const next = doc.indexOf("\n## ", start + 1);
  return doc.slice(start, next === -1 ? undefined : next);
}

/** The section's fenced yaml block of rules (the one starting with `groups:`). */
function rulesBlock(section: string): string {
  const blocks = [...section.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1] ?? "");
  const rules = blocks.filter((b) => b.startsWith("groups:"));
  expect(rules, "one yaml block of alert rules").toHaveLength(1);
  return rules[0] as string;
}

describe("the documented alert rules", () => {
  it("pass promtool check rules", async () => {
    if (!existsSync(PROMTOOL)) throw new Error(`no promtool at ${PROMTOOL}: apt-get install -y prometheus, or set PROMTOOL_PATH`);
    const dir = await mkdtemp(path.join(os.tmpdir(), "alert-rules-"));
    try {
      const file = path.join(dir, "rules.yml");
      await writeFile(file, rulesBlock(metricsSection()));
      const checked = spawnSync(PROMTOOL, ["check", "rules", file], { encoding: "utf8" });
      expect(checked.status, `${checked.stdout}${checked.stderr}`).toBe(0);
      expect(checked.stdout).toMatch(/SUCCESS: [1-9]\d* rules found/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("cover a high 401 rate, key set refreshes failing and mail failing, with series the table lists", () => {
    const section = metricsSection();
    const rules = rulesBlock(section);
    for (const alert of ["HighUnauthorizedRate", "KeySetRefreshFailing", "MailFailing"]) expect(rules).toContain(`alert: ${alert}`);
    const table = section.slice(section.indexOf("| Series"));
    const used = new Set([...rules.matchAll(/\b((?:api|identity|db|http)_[a-z_]+)\{?/g)].map((m) => m[1] as string));
    expect(used.size).toBeGreaterThan(3);
    for (const name of used) expect(table, `${name} is in the series table`).toContain(`\`${name}\``);
  });
});
