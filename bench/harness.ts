/**
 * Shared shape of benchmark results. Every result is a ratio against a baseline measured in the
 * same run on the same machine, so numbers carry across machines; no result is a pass/fail gate.
 */
export interface BenchResult {
  name: string;
  /** What was measured, e.g. "12345 records/s". */
  measured: string;
  /** The floor it is compared with, e.g. "raw crypto.sign 23456 ops/s". */
  baseline: string;
  /** measured / baseline (or baseline / measured for latencies, as `direction` says). */
  ratio: number;
  /** The target written in the issue, e.g. ">= 0.5". */
  target: string;
}

export interface BenchModule {
  title: string;
  run(): Promise<BenchResult[]>;
}

/** Runs `fn` repeatedly for about `ms` milliseconds and returns operations per second. */
export function rate(fn: () => void, ms = 1000): number {
  const start = process.hrtime.bigint();
  const limit = BigInt(ms) * 1_000_000n;
  let n = 0;
  let elapsed = 0n;
  while (elapsed < limit) {
    for (let i = 0; i < 64; i++) fn();
    n += 64;
    elapsed = process.hrtime.bigint() - start;
  }
  return n / (Number(elapsed) / 1e9);
}

/** Seconds taken by an async function. */
export async function seconds(fn: () => Promise<unknown> | unknown): Promise<number> {
  const start = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - start) / 1e9;
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index]!;
}

export function median(xs: number[]): number {
  return percentile(
    [...xs].sort((a, b) => a - b),
    50,
  );
}

/** "min–max" of a sample, rounded to whole units. */
export function spread(xs: number[]): string {
  return `${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)}`;
}
