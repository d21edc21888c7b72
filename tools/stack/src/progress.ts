import { performance } from "node:perf_hooks";
import { launcherConfig } from "./config.js";

/** A `stack    | …` line on stdout. */
export const log = (line: string) => {
  process.stdout.write(`stack    | ${line}\n`);
};

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** When `pnpm start` began: bin/start.mjs passes its own start (the build came first). */
const startedAt = launcherConfig().startedAt ?? performance.timeOrigin;

/** Time since `pnpm start` began. */
export const elapsed = () => seconds(Date.now() - startedAt);

/**
 * Prints `▸ <phase>: <what>` now and returns a function that prints `✓ <phase>: <result>` with
 * the phase's duration and the time since start, so a first start is never silent.
 */
export function phase(name: string, what: string): (result?: string) => void {
  const started = performance.now();
  log(`▸ ${name}: ${what}`);
  return (result = "done") => log(`✓ ${name}: ${result} (${seconds(performance.now() - started)}, ${elapsed()} since start)`);
}
