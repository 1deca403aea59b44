/**
 * The goals the benchmarks are held to (docs/performance.md lists them), gathered from every
 * benchmark of a run and printed together at its end: each with the figure this run measured,
 * the goal beside it, and whether it was met. A benchmark states a goal where it measures it.
 */

export interface GoalRow {
  /** What is measured, as docs/performance.md names it. */
  measure: string;
  /** This run's figure, formatted (e.g. "0.64", "41x", "612 MB"). */
  today: string;
  /** The goal, formatted the same way (e.g. ">= 0.6", "< 1.5 GB"). */
  goal: string;
  met: boolean;
}

const rows: GoalRow[] = [];

export function recordGoal(row: GoalRow): void {
  rows.push(row);
}

/** The goals the run measured, as one table; nothing when the run measured none. */
export function printGoals(): void {
  if (rows.length === 0) return;
  const table = [['measure', 'today', 'goal', ''], ...rows.map((row) => [row.measure, row.today, row.goal, row.met ? 'met' : 'MISSED'])];
  const widths = table[0]!.map((_, column) => Math.max(...table.map((cells) => cells[column]!.length)));
  console.log('\n## goals\n');
  for (const cells of table) console.log(cells.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join('  '));
}
