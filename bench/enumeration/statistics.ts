/**
 * The statistics of the enumeration benchmarks: medians, a two-sided Mann-Whitney U test, and the
 * verdict on one comparison. A rank test, because the times of a busy machine are skewed and
 * carry outliers (a garbage collection, another process's burst) that would swamp a t-test.
 */

/** Two groups of times differ when their medians are more than this far apart... */
export const MAX_MEDIAN_RATIO = 0.1;
/** ...or when the rank test says they differ at this level (SECURITY-TESTS.md, item 1). */
export const SIGNIFICANCE = 0.01;

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 0 ? (sorted[middle - 1]! + sorted[middle]!) / 2 : sorted[middle]!;
}

/** Two-sided p-value of the Mann-Whitney U test, by the normal approximation with tie correction. */
export function mannWhitneyP(a: readonly number[], b: readonly number[]): number {
  const all = [...a.map((value) => ({ value, group: 0 })), ...b.map((value) => ({ value, group: 1 }))].sort((x, y) => x.value - y.value);
  const ranks = new Array<number>(all.length);
  let tieTerm = 0;
  for (let i = 0; i < all.length; ) {
    let j = i;
    while (j + 1 < all.length && all[j + 1]!.value === all[i]!.value) j++;
    const rank = (i + j) / 2 + 1;
    for (let k = i; k <= j; k++) ranks[k] = rank;
    const t = j - i + 1;
    tieTerm += t ** 3 - t;
    i = j + 1;
  }
  const rankSumA = all.reduce((sum, item, index) => (item.group === 0 ? sum + ranks[index]! : sum), 0);
  const n1 = a.length;
  const n2 = b.length;
  const u = rankSumA - (n1 * (n1 + 1)) / 2;
  const mean = (n1 * n2) / 2;
  const variance = ((n1 * n2) / 12) * (n1 + n2 + 1 - tieTerm / ((n1 + n2) * (n1 + n2 - 1)));
  const z = Math.abs(u - mean) / Math.sqrt(variance);
  // Two-sided tail of the standard normal (Abramowitz-Stegun 7.1.26 for erfc).
  const t = 1 / (1 + 0.3275911 * (z / Math.SQRT2));
  const erfc = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))) * Math.exp(-((z / Math.SQRT2) ** 2));
  return erfc;
}

export interface Comparison {
  /** What is compared, e.g. "signup page: registered vs new address". */
  name: string;
  reference: { label: string; times: readonly number[] };
  other: { label: string; times: readonly number[] };
}

export interface Verdict {
  name: string;
  label: string;
  medianMs: number;
  referenceMedianMs: number;
  ratio: number;
  p: number;
  same: boolean;
}

export function judge(comparison: Comparison): Verdict {
  const referenceMedianMs = median(comparison.reference.times);
  const medianMs = median(comparison.other.times);
  const ratio = medianMs / referenceMedianMs;
  const p = mannWhitneyP(comparison.other.times, comparison.reference.times);
  return { name: comparison.name, label: comparison.other.label, medianMs, referenceMedianMs, ratio, p, same: Math.abs(ratio - 1) <= MAX_MEDIAN_RATIO && p > SIGNIFICANCE };
}

/** Prints one table row per verdict. */
export function printVerdicts(title: string, referenceLabel: string, verdicts: readonly Verdict[]): void {
  console.log(`\n${title}\n`);
  console.log(`${'group'.padEnd(22)} median ms  ${`vs ${referenceLabel}`.padStart(14)}  Mann-Whitney p  verdict`);
  const first = verdicts[0];
  if (first) console.log(`${referenceLabel.padEnd(22)} ${first.referenceMedianMs.toFixed(2).padStart(9)}  ${'1.000'.padStart(14)}  ${'-'.padStart(14)}  reference`);
  for (const verdict of verdicts) {
    console.log(
      `${verdict.label.padEnd(22)} ${verdict.medianMs.toFixed(2).padStart(9)}  ${verdict.ratio.toFixed(3).padStart(14)}  ${formatP(verdict.p).padStart(14)}  ${verdict.same ? 'same' : 'DIFFERENT'}`,
    );
  }
}

function formatP(p: number): string {
  return p < 0.0001 ? p.toExponential(1) : p.toFixed(4);
}
