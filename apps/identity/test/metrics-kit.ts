import { register } from "prom-client";
import { expect } from "vitest";

// Reads identity's series where they are counted: prom-client's global registry of this process
// (src/metrics.ts), which the app under test shares with the test.

/**
 * The value of the series `name{labels}` now; undefined when the series does not exist (a
 * labelled counter set to 0 exists).
 */
export async function seriesValue(name: string, labels: Record<string, string>): Promise<number | undefined> {
  const metric = register.getSingleMetric(name);
  expect(metric, `${name} is registered`).toBeDefined();
  const { values } = await (metric as NonNullable<typeof metric>).get();
  const wanted = Object.entries(labels);
  return values.find((v) => wanted.length === Object.keys(v.labels).length && wanted.every(([k, x]) => v.labels[k] === x))?.value;
}

/** A refusals series' value by limiter (`identity_rate_limit_refusals_total`). */
export const refusals = (limiter: string) => seriesValue("identity_rate_limit_refusals_total", { limiter });
