import { createTestDatabase, type TestDatabase } from "@app/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeSoak, runSoak } from "./soak.js";
import { type SoakStack, startSoakStack } from "./soak-stack.js";

// The soak: two identities and two APIs behind the gateway under a steady load of authenticated
// requests for SOAK_SECONDS (60 in CI; `pnpm soak --seconds N` runs the same for any duration).
// Zero non-2xx answers, and the resident memory of every process stays flat: its level (the
// median reading of the last third against the median of the first half) rises less than
// SOAK_MAX_RSS_GROWTH_MB; garbage collection moves single readings, a leak moves the level. And
// no process ever grows more than 150 MiB over the whole run.
const SECONDS = Number(process.env.SOAK_SECONDS ?? (process.env.CI ? 60 : 20));
const MAX_GROWTH_MB = Number(process.env.SOAK_MAX_RSS_GROWTH_MB ?? 50);
const lines: string[] = [];
let database: TestDatabase;
let soak: SoakStack;

beforeAll(async () => {
  database = await createTestDatabase();
  soak = await startSoakStack({ databaseUrl: database.url, onLine: (name, line) => lines.push(`${name} ${line}`) });
}, 90_000);
afterAll(async () => {
  await soak?.stack.stop();
  await database?.drop();
});

describe("soak", () => {
  it(
    `${SECONDS} s of steady load: zero errors, flat memory`,
    async () => {
      const result = await runSoak({ baseUrl: soak.stack.baseUrl, jwts: soak.jwts, seconds: SECONDS, watch: soak.watch });
      process.stdout.write(`${describeSoak(result)}\n`);
      expect(result.samples).toEqual([]);
      expect(result.errors).toBe(0);
      expect(result.requests).toBeGreaterThan(SECONDS * 50);
      for (const r of result.rss) {
        expect(r.lateGrowthMb, `${r.name}: ${r.startMb} -> ${r.midMb} -> ${r.endMb} MiB`).toBeLessThan(MAX_GROWTH_MB);
        expect(r.endMb - r.startMb, `${r.name}: ${r.startMb} -> ${r.endMb} MiB`).toBeLessThan(150);
      }
      expect(soak.stack.processes.every((p) => p.child.exitCode === null)).toBe(true);
      expect(lines.filter((l) => /"level":(50|60)/.test(l))).toEqual([]);
    },
    (SECONDS + 60) * 1000,
  );
});
