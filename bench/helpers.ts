import * as fs from "node:fs";

/** Small statistics helpers shared by the benchmarks. */
export function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  // No samples have no percentile.
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

export function median(samples: number[]): number {
  return percentile(samples, 50);
}

export function fmtMs(ms: number): string {
  return ms < 1 ? `${(ms * 1000).toFixed(0)} us` : `${ms.toFixed(2)} ms`;
}

export function ratio(value: number, baseline: number): string {
  return `${(value / baseline).toFixed(2)}x`;
}

/**
 * Prints one result line: name, value, baseline, ratio and the goal it is held against. When
 * bench/run.mjs runs the benchmark, the line is also collected for bench/report.md and .json.
 */
export function report(name: string, value: string, baseline: string, r: string, goal: string): void {
  console.log(
    `${name.padEnd(44)} ${value.padStart(12)}  baseline ${baseline.padStart(12)}  ratio ${r.padStart(7)}  goal ${goal}`,
  );
  const file = process.env.DLINE_BENCH_RESULTS;
  if (file)
    fs.appendFileSync(
      file,
      JSON.stringify({ bench: process.env.DLINE_BENCH_NAME ?? "", name, value, baseline, ratio: r, goal }) + "\n",
    );
}
