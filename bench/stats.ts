/** Latency and throughput of one side of one scenario, pooled over its measured rounds. */
export interface Summary {
  /** Operations completed. */
  n: number;
  opsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  /** Operations that failed (not counted in the latencies); any is a harness or graph bug. */
  errors: number;
}

/** Nearest-rank percentile of an ascending array; NaN when empty. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

export function summarize(latenciesMs: readonly number[], elapsedMs: number, errors: number): Summary {
  const sorted = Float64Array.from(latenciesMs).sort();
  const values = Array.from(sorted);
  return {
    n: values.length,
    opsPerSec: elapsedMs > 0 ? (values.length * 1000) / elapsedMs : 0,
    p50Ms: percentile(values, 50),
    p99Ms: percentile(values, 99),
    errors,
  };
}
