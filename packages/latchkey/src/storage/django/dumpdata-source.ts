/**
 * A `manage.py dumpdata` file as a DjangoSource. The file is read once, as it streams
 * (json-array-stream.ts), each entry becoming its row as it is read (dumpdata-collector.ts).
 * Unlike the database, a dump is then held in memory, compactly (dumpdata-row-table.ts):
 * references by natural key can only be resolved once every user has been seen, and rows are
 * handed out in primary-key order, which a hand-edited dump need not keep.
 */
import { LatchkeyError } from '../../core/errors.js';
import type { DjangoKind, DjangoLoginField, DjangoRows, DjangoUserColumns } from '../../django-import/model.js';
import type { DjangoSource } from '../../django-import/ports.js';
import { DumpCollector, type DumpRows } from './dumpdata-collector.js';
import { UnresolvedReferenceError, type DumpEntry } from './dumpdata-references.js';
import type { RowTable } from './dumpdata-row-table.js';
import { NotAJsonArrayError, readJsonArrayObjects } from './json-array-stream.js';

function isDumpEntry(value: unknown): value is DumpEntry {
  const entry = value as Partial<DumpEntry> | null;
  return typeof entry === 'object' && entry !== null && typeof entry.model === 'string' && typeof entry.fields === 'object' && entry.fields !== null;
}

export interface DjangoDumpdataOptions {
  /** The users.user fields the project's user fields come from (their djangoColumn), read into DjangoUser.projectColumns. */
  projectColumns?: readonly string[];
}

async function collect(path: string, projectColumns: readonly string[]): Promise<DumpCollector> {
  const collector = new DumpCollector(projectColumns);
  let index = 0;
  for await (const value of readJsonArrayObjects(path)) {
    index++;
    if (!isDumpEntry(value)) throw new NotAJsonArrayError(`its entry ${index} is not a dumpdata entry ({"model", "pk", "fields"})`);
    collector.add(value);
  }
  collector.finish();
  return collector;
}

class DumpdataSource implements DjangoSource {
  readonly description: string;

  constructor(
    path: string,
    private readonly dumped: DumpRows,
    private readonly login: DjangoLoginField,
    private readonly kindsPresent: ReadonlySet<DjangoKind>,
    private readonly columns: DjangoUserColumns,
  ) {
    this.description = `dumpdata file ${path}`;
  }

  loginField(): Promise<DjangoLoginField> {
    return Promise.resolve(this.login);
  }

  userColumns(): Promise<DjangoUserColumns> {
    return Promise.resolve(this.columns);
  }

  has(kind: DjangoKind): Promise<boolean> {
    return Promise.resolve(this.kindsPresent.has(kind));
  }

  count(kind: DjangoKind): Promise<number> {
    return Promise.resolve(this.dumped[kind].length);
  }

  rows<K extends DjangoKind>(kind: K, batchSize: number): AsyncIterable<DjangoRows[K][]> {
    if (!Number.isSafeInteger(batchSize) || batchSize < 1) throw new RangeError(`batchSize must be a positive integer, not ${batchSize}.`);
    const rows = this.dumped[kind] as RowTable<DjangoRows[K]>;
    // eslint-disable-next-line @typescript-eslint/require-await -- the port is asynchronous; a dump's rows are already in memory.
    return (async function* () {
      // Each batch's row objects are made as it is handed out, and are the consumer's to keep or drop.
      for (let start = 0; start < rows.length; start += batchSize) yield rows.slice(start, start + batchSize);
    })();
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

/**
 * Reads a `manage.py dumpdata` JSON file. Refuses, with a message that names the file and says
 * what to change, a file that is not a dump, a dump whose references cannot be resolved, and a
 * value that is not what its column holds.
 */
export async function openDjangoDumpdata(path: string, options: DjangoDumpdataOptions = {}): Promise<DjangoSource> {
  const refuse = (reason: string, cause: unknown) => new LatchkeyError('invalid_input', `${path} is not a dumpdata file import-django can read: ${reason}.`, { cause });
  let collector: DumpCollector;
  try {
    collector = await collect(path, options.projectColumns ?? []);
  } catch (error) {
    if (error instanceof NotAJsonArrayError || error instanceof UnresolvedReferenceError) throw refuse(error.message, error);
    if (error instanceof LatchkeyError) throw new LatchkeyError('invalid_input', `${path}: ${error.message}`, { cause: error });
    const code = (error as NodeJS.ErrnoException).code;
    throw refuse(code === 'ENOENT' ? 'there is no such file' : code === 'EISDIR' ? 'it is a directory' : (error as Error).message, error);
  }
  return new DumpdataSource(path, collector.rows, collector.loginField, collector.present, collector.userColumns);
}
