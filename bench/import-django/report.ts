/** What the import-django benchmark prints of its runs, and the checks their counts must pass. */
import { DJANGO_KINDS, DJANGO_TABLES } from '../../packages/latchkey/src/django-import/model.js';
import { printTable } from '../harness.js';
import type { DjangoDatabase } from './django-database.js';
import { population } from './django-rows.js';
import { count, duration, load, MiB, seconds, secondsSince } from './figures.js';
import type { ImportResult, KindFigures } from './import-child.js';

function totalOf(result: ImportResult, pick: (kind: KindFigures) => number): number {
  return DJANGO_KINDS.reduce((sum, kind) => sum + pick(result.kinds[kind]), 0);
}

export function printRun(name: string, result: ImportResult): void {
  const rows = totalOf(result, (kind) => kind.read);
  console.log(
    `${name}: ${duration(result.seconds)}, ${count(Math.round(result.kinds.users.read / result.seconds))} users/s, ${count(Math.round(rows / result.seconds))} rows/s; ` +
      `inserted ${count(totalOf(result, (kind) => kind.inserted))}, already there ${count(totalOf(result, (kind) => kind.present))}, skipped ${count(totalOf(result, (kind) => kind.skipped))}; ` +
      `peak RSS ${(result.maxRssBytes / MiB).toFixed(0)} MiB; CPU ${seconds(result.cpuSeconds)} s (${((100 * result.cpuSeconds) / result.seconds).toFixed(0)}% of one core); load ${load()}`,
  );
  for (const line of result.skipped) console.log(`  skipped: ${line}`);
}

/** Where the time went, kind by kind. */
export function printKinds(result: ImportResult): void {
  const table = [['kind', 'rows', 'batches', 's', 'rows/s', 'source reads s', 'SELECTs s', 'INSERTs s', 'other SQL s', 'JavaScript s']];
  for (const kind of DJANGO_KINDS) {
    const figures = result.kinds[kind];
    if (figures.read === 0) continue;
    const javascript = figures.seconds - figures.source - figures.select - figures.insert - figures.otherSql;
    table.push([
      DJANGO_TABLES[kind],
      count(figures.read),
      count(figures.batches),
      seconds(figures.seconds),
      count(Math.round(figures.read / figures.seconds)),
      seconds(figures.source),
      seconds(figures.select),
      seconds(figures.insert),
      seconds(figures.otherSql),
      seconds(javascript),
    ]);
  }
  table.push(['opening the source', '', '', seconds(result.openSeconds), '', '', '', '', '', '']);
  table.push(['sequences and commit', '', '', seconds(result.commitSeconds), '', '', '', '', '', '']);
  printTable(table);
}

/** What the first run must have written, and the second found: the benchmark's own rows, all of them. */
export function checkCounts(users: number, first: ImportResult, second: ImportResult): string[] {
  const expected = population(users);
  const problems: string[] = [];
  for (const kind of Object.keys(expected) as Array<keyof typeof expected>) {
    if (first.kinds[kind].inserted !== expected[kind]) problems.push(`first run inserted ${count(first.kinds[kind].inserted)} ${kind}, not ${count(expected[kind])}`);
    if (second.kinds[kind].present !== expected[kind]) problems.push(`second run found ${count(second.kinds[kind].present)} ${kind} there, not ${count(expected[kind])}`);
  }
  if (totalOf(second, (kind) => kind.inserted) !== 0) problems.push('the second run inserted rows');
  if (first.verify !== undefined && first.verify.differences > 0) problems.push(`the reverse check found ${first.verify.differences} difference(s)`);
  return problems;
}

export function printSetup(database: DjangoDatabase, users: number, started: number): void {
  const rows = population(users);
  console.log(
    `Django database: ${count(users)} users, ${count(rows.emailAddresses)} email addresses, ${count(rows.tokens)} tokens, ${count(rows.authenticators)} MFA authenticators; ` +
      `${(database.sizeBytes / MiB).toFixed(0)} MiB; made in ${seconds(secondsSince(started))} s (${database.steps.map(([step, time]) => `${step} ${seconds(time)} s`).join(', ')}); not measured`,
  );
}

