/** Small, dependency-free statistics used by the benchmark report. */

/** The median of a list (mean of the two middle values for an even count); NaN when empty. */
export function median(values: readonly number[]): number {
  const finite = values.filter((v) => Number.isFinite(v));
  if (finite.length === 0) return Number.NaN;
  const sorted = [...finite].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** Nearest-rank percentile (p in 0..100) of a list; NaN when empty. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1] as number;
}

/** Min and max of a list (NaN when empty). */
export function spread(values: readonly number[]): { min: number; max: number } {
  const finite = values.filter((v) => Number.isFinite(v));
  if (finite.length === 0) return { min: Number.NaN, max: Number.NaN };
  return { min: Math.min(...finite), max: Math.max(...finite) };
}

/**
 * Ratios taken inside one run: for each round, `numerator[i] / denominator[i]` (both measured in
 * the same round, minutes apart at most), then the median of those per-round ratios. This cancels
 * slow drifts of machine load that would bias a ratio of two medians taken at different times.
 */
export function pairedRatio(numerator: readonly number[], denominator: readonly number[]): number {
  const ratios: number[] = [];
  const n = Math.min(numerator.length, denominator.length);
  for (let i = 0; i < n; i += 1) {
    const a = numerator[i] as number;
    const b = denominator[i] as number;
    if (Number.isFinite(a) && Number.isFinite(b) && b > 0) ratios.push(a / b);
  }
  return median(ratios);
}

/** Rotates a list left by `by` places (interleaving: each round starts with a different variant). */
export function rotate<T>(items: readonly T[], by: number): T[] {
  if (items.length === 0) return [];
  const k = ((by % items.length) + items.length) % items.length;
  return [...items.slice(k), ...items.slice(0, k)];
}

/** Formats a number with a fixed number of decimals, or "–" when not finite. */
export function fmt(value: number | undefined, decimals = 0): string {
  if (value === undefined || !Number.isFinite(value)) return "–";
  return value.toLocaleString("en-US", { minimumFractionDigits: decimals, maximumFractionDigits: decimals });
}
