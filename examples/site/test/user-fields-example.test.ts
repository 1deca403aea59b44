/**
 * The worked example of Latchkey's docs (user-fields.md: a `company` and a `birth_date`;
 * project-data.md: a `notes` table owned by the user), applied word for word to a copy of this
 * project and run there, as a person following the docs would: the files the docs show are
 * written, `manage makemigration` and `manage migrate` add the columns and the table, the copy
 * type-checks (so `user.company` is typed), and the tests the docs show pass. A doc that drifts
 * from what works fails here.
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const PROJECT = join(import.meta.dirname, '..');
/** The docs of the Latchkey this project installed (node_modules/@latchkey/core/docs). */
const DOCS = join(dirname(createRequire(import.meta.url).resolve('@latchkey/core/package.json')), 'docs');

/**
 * The files a doc shows: each fenced block whose info string names a path after its language
 * (```ts src/users/fields.ts), indented or not (a block in a list item is).
 */
function filesShownIn(page: string): Map<string, string> {
  const text = readFileSync(join(DOCS, page), 'utf8');
  const blocks = [...text.matchAll(/^( *)```ts ([^\n]+)\n([\s\S]*?)^\1```$/gm)];
  return new Map(blocks.map(([, indent = '', path = '', body = '']) => [path.trim(), body.replace(new RegExp(`^${indent}`, 'gm'), '')]));
}

/** The copy: inside the project, so that its imports resolve as the project's do; everything but node_modules and local state. */
function copyOfProject(): string {
  const copy = mkdtempSync(join(PROJECT, '.user-fields-example-'));
  // Entry by entry: Node refuses to copy a folder into itself, as copying the project whole would.
  for (const entry of readdirSync(PROJECT)) {
    if (/^(node_modules|\.git|\.latchkey|\.user-fields-example-.*|coverage|db\.sqlite3.*)$/.test(entry)) continue;
    cpSync(join(PROJECT, entry), join(copy, entry), { recursive: true });
  }
  return copy;
}

describe("the docs' worked example: a company, a birth date and a notes table", () => {
  let copy: string;
  const environment = () => ({ ...process.env, NODE_ENV: 'local', DATABASE_URL: `sqlite:${join(copy, 'db.sqlite3')}`, EMAIL_URL: 'console://' });
  const manage = (...argv: string[]) => run(process.execPath, ['--import', 'tsx', 'src/manage.ts', ...argv], { cwd: copy, env: environment() });
  const npx = (...argv: string[]) => run('npx', argv, { cwd: copy, env: { ...process.env, NODE_ENV: 'test' } });

  beforeAll(() => {
    copy = copyOfProject();
  });
  afterAll(() => rmSync(copy, { recursive: true, force: true }));

  it('works as the docs say: the migrations, the types and the tests they show', async () => {
    const fields = filesShownIn('user-fields.md');
    const notes = filesShownIn('project-data.md');
    expect([...fields.keys()]).toEqual(['src/users/fields.ts', 'test/user-fields.test.ts']);
    const [migrationPath, migration] = [...notes].find(([path]) => path.startsWith('src/migrations/'))!;
    for (const [path, source] of [...fields, ...notes]) if (path !== migrationPath) writeFileSync(join(copy, path), source);

    // The columns, written by makemigration from the declaration; the table, written by hand.
    await manage('migrate');
    const columns = await manage('makemigration', 'add_company_and_birth_date');
    expect(columns.stdout).toMatch(/^Wrote src\/migrations\/\d{8}_\d{6}_add_company_and_birth_date\.ts; listed in src\/migrations\/index\.ts\. It adds the column\(s\) of company, birth_date\.\n$/);
    await manage('makemigration', 'create_notes', '--empty');
    const created = readdirSync(join(copy, 'src', 'migrations')).find((file) => file.endsWith('_create_notes.ts'))!;
    expect(`src/migrations/${created}`).toMatch(new RegExp(`^${migrationPath.replace('*', '\\d{8}_\\d{6}')}$`));
    writeFileSync(join(copy, 'src', 'migrations', created), migration);
    const applied = await manage('migrate');
    expect(applied.stdout).toMatch(/Applied \d{8}_\d{6}_add_company_and_birth_date\.\nApplied \d{8}_\d{6}_create_notes\.\n$/);

    // The copy type-checks: user.company and user.birth_date are typed where the tests read them.
    await npx('tsc', '--noEmit', '-p', '.');
    // And the tests the docs show pass, on the databases this project's tests use.
    const tests = [...fields.keys(), ...notes.keys()].filter((path) => path.startsWith('test/'));
    const result = await npx('vitest', 'run', ...tests);
    // eslint-disable-next-line no-control-regex -- the colours of vitest's summary
    expect(result.stdout.replace(/\u001b\[[0-9;]*m/g, '')).toMatch(new RegExp(`Test Files\\s+${tests.length} passed`));
  }, 240_000);
});
