// What `manage import-django` does (its command line is declared in import-django.ts): moves a
// cookiecutter-django project's accounts into Latchkey (django-import/flows/import-accounts.ts),
// or checks an import done (flows/verify-import.ts).
import { importDjangoAccounts, type ImportReport } from '../../django-import/flows/import-accounts.js';
import { verifyDjangoImport, type VerifyReport } from '../../django-import/flows/verify-import.js';
import { DJANGO_KINDS, DJANGO_TABLES, type DjangoKind } from '../../django-import/model.js';
import type { DjangoSource } from '../../django-import/ports.js';
import { djangoColumnsOf } from '../../django-import/user-fields.js';
import { docsPage } from '../../core/docs-page.js';
import { isLatchkeyError } from '../../core/errors.js';
import { openDjangoDatabase } from '../../storage/django/database-source.js';
import { openDjangoDumpdata } from '../../storage/django/dumpdata-source.js';
import { createKyselyImportTarget } from '../../storage/kysely/django-import-target.js';
import type { ParsedArguments } from '../arguments.js';
import { withLatchkey, type CommandContext } from '../command.js';
import { CommandError, type CommandIO } from '../io.js';

/**
 * A source named by a database URL is read from that database; anything else is a dumpdata file.
 * Either reads, beside Latchkey's columns, those the project's user fields come from.
 */
function openSource(location: string, projectColumns: readonly string[]): Promise<DjangoSource> {
  return /^(postgres|postgresql|sqlite):/.test(location) ? openDjangoDatabase(location, { projectColumns }) : openDjangoDumpdata(location, { projectColumns });
}

function positiveInteger(value: string | undefined, option: string, fallback: number): number {
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 1) throw new CommandError(`--${option} must be a whole number above 0, not "${value}".`);
  return parsed;
}

/** Large imports say how far they are, at most once a second, on standard error (standard output keeps the report). */
function progressPrinter(io: CommandIO): (progress: { kind: DjangoKind; done: number; total: number }) => void {
  let last = 0;
  return ({ kind, done, total }) => {
    const now = Date.now();
    if (total < 10_000 || (now - last < 1000 && done < total)) return;
    last = now;
    io.stderr.write(`  ${DJANGO_TABLES[kind]}: ${done.toLocaleString('en')} of ${total.toLocaleString('en')}\n`);
  };
}

const LABELS: Record<DjangoKind, string> = {
  users: 'users',
  emailAddresses: 'email addresses',
  tokens: 'API tokens',
  authenticators: 'MFA authenticators',
  socialApps: 'social apps',
  socialAccounts: 'social accounts',
  socialTokens: 'social tokens',
  permissions: 'admin permissions',
};

function printImportReport(io: CommandIO, report: ImportReport): void {
  const out = (line: string) => io.stdout.write(`${line}\n`);
  const width = Math.max(...DJANGO_KINDS.map((kind) => `${LABELS[kind]} (${DJANGO_TABLES[kind]})`.length));
  out(`${''.padEnd(width)}  ${'read'.padStart(9)}  ${(report.dryRun ? 'would import' : 'imported').padStart(12)}  ${'already there'.padStart(13)}  ${'skipped'.padStart(7)}`);
  for (const kind of DJANGO_KINDS) {
    const count = report.counts[kind];
    out(`${`${LABELS[kind]} (${DJANGO_TABLES[kind]})`.padEnd(width)}  ${String(count.read).padStart(9)}  ${String(count.inserted).padStart(12)}  ${String(count.present).padStart(13)}  ${String(count.skipped).padStart(7)}`);
  }
  if (report.skipped.length > 0) {
    out('');
    out(`Skipped (${report.skipped.length}):`);
    for (const row of report.skipped) out(`  ${DJANGO_TABLES[row.kind]} ${row.id}: ${row.reason}`);
  }
  if (report.unreadablePasswords.length > 0) {
    out('');
    out(`${report.unreadablePasswords.length} user(s) have a password hash Latchkey cannot check (ids ${report.unreadablePasswords.join(', ')}): they sign in after a password reset.`);
  }
  // Said, not refused: the accounts move all the same, and a column left behind is named.
  if (report.undeclaredColumns.length > 0) {
    out('');
    out(`users_user has columns this project does not declare: ${report.undeclaredColumns.join(', ')} — declare them in src/users/fields.ts to import them (${docsPage('user-fields.md')}).`);
  }
  if (report.fieldsWithoutColumn.length > 0) {
    const fields = report.fieldsWithoutColumn.map(({ field, column }) => (field === column ? field : `${field} (column ${column})`));
    out('');
    out(`users_user has no column for the user field(s) ${fields.join(', ')}: their users get the empty value. If Django names the column otherwise, give the field its djangoColumn (${docsPage('user-fields.md')}).`);
  }
  out('');
  const inserted = DJANGO_KINDS.reduce((sum, kind) => sum + report.counts[kind].inserted, 0);
  if (report.dryRun) out(`Dry run: nothing was written (${inserted} row(s) would be).`);
  else if (inserted === 0) out('Nothing new to import: every row is in Latchkey already, or skipped above.');
  else out(`Imported ${inserted} row(s) in one transaction.`);
}

function printVerifyReport(io: CommandIO, report: VerifyReport): void {
  const out = (line: string) => io.stdout.write(`${line}\n`);
  out(`Checked ${report.usersChecked} of ${report.usersInSource} user(s) and ${report.rowsChecked} row(s) of theirs against Latchkey.`);
  for (const difference of report.differences) out(`  ${DJANGO_TABLES[difference.kind]} ${difference.id}: ${difference.problem}`);
  out(report.differences.length === 0 ? 'Every row checked matches the source.' : `${report.differences.length} difference(s).`);
}

export async function run(context: CommandContext, parsed: ParsedArguments): Promise<number> {
  const { io } = context;
  const location = parsed.argument('source');
  const batchSize = positiveInteger(parsed.string('batch-size'), 'batch-size', 1000);
  const sample = positiveInteger(parsed.string('sample'), 'sample', 200);
  const decrypt = context.options.djangoDecrypt;
  return withLatchkey(context, async (latchkey) => {
    const source = await openSource(location, djangoColumnsOf(latchkey.deps.userFields)).catch((error: unknown) => {
      throw new CommandError(error instanceof Error ? error.message : String(error));
    });
    try {
      if (parsed.flag('verify')) {
        const report = await verifyDjangoImport(latchkey.deps, source, { sample, decrypt });
        printVerifyReport(io, report);
        return report.differences.length === 0 ? 0 : 1;
      }
      const dryRun = parsed.flag('dry-run');
      io.stderr.write(`Importing from ${source.description}${dryRun ? ' (dry run: nothing will be written)' : ''}.\n`);
      const { database } = latchkey;
      const target = createKyselyImportTarget(database.kysely, database.dialect, { usernameType: database.usernameType, userFields: database.userFields.fields });
      const report = await importDjangoAccounts(latchkey.deps, source, target, { dryRun, batchSize, decrypt, onProgress: progressPrinter(io) });
      printImportReport(io, report);
      return 0;
    } catch (error) {
      if (isLatchkeyError(error)) throw new CommandError(error.message);
      throw error;
    } finally {
      await source.close();
    }
  });
}
