/**
 * A Django project's database as a DjangoSource: its tables read by name, read-only, whatever
 * versions of the apps made them. What differs between versions is found out once, when opening:
 * which tables exist (a project without allauth.mfa has no mfa_authenticator), which optional
 * columns they have (users_user without username when users log in by email; socialapp's
 * provider_id and settings from allauth 0.55), and which of the columns the project's user fields
come from users_user has. Rows are read a batch at a time, each batch
 * continuing after the last key of the one before (never OFFSET, which rereads everything
 * skipped), so a million users stream through in constant memory.
 */
import { LatchkeyError } from '../../core/errors.js';
import { DJANGO_TABLES, type DjangoKind, type DjangoLoginField, type DjangoRows, type DjangoUserColumns } from '../../django-import/model.js';
import type { DjangoSource } from '../../django-import/ports.js';
import { countPermissionsStatement, findPermissionTables, permissionBatchStatement, type PermissionTables } from './permission-statements.js';
import { DJANGO_COLUMNS, DJANGO_RECORD_MAPPERS, djangoUserColumns, mapDjangoUser } from './records.js';
import { openDjangoSqlConnection, type DjangoSqlConnection } from './sql-connection.js';
import type { DjangoRecord } from './values.js';

type TableKind = Exclude<DjangoKind, 'permissions'>;

/** What a table is read as: its columns present in this database, and the key its rows are ordered and continued by. */
interface TableLayout {
  table: string;
  columns: readonly string[];
  key: string;
}

interface DatabaseLayout {
  tables: Partial<Record<TableKind, TableLayout>>;
  permissions: PermissionTables;
  userColumns: DjangoUserColumns;
  /** The project's boolean columns: SQLite gives their values as 0 and 1, read as false and true, as PostgreSQL and dumpdata give them. */
  booleanColumns: readonly string[];
}

export interface DjangoDatabaseOptions {
  /** The users_user columns the project's user fields come from (their djangoColumn), read into DjangoUser.projectColumns. */
  projectColumns?: readonly string[];
}

const quote = (identifier: string) => `"${identifier}"`;

function tableLayout(connection: DjangoSqlConnection, kind: TableKind, present: ReadonlyMap<string, string> | undefined): TableLayout | undefined {
  const table = DJANGO_TABLES[kind];
  if (present === undefined) return undefined;
  const { required, optional } = DJANGO_COLUMNS[kind];
  const missing = required.filter((column) => !present.has(column));
  if (missing.length > 0) {
    throw new LatchkeyError('invalid_input', `${table} in the ${connection.description} has no ${missing.join(', ')} column: it is not the table Django's apps make.`);
  }
  return { table, columns: [...required, ...optional.filter((column) => present.has(column))], key: kind === 'tokens' ? 'key' : 'id' };
}

async function readLayout(connection: DjangoSqlConnection, projectColumns: readonly string[]): Promise<DatabaseLayout> {
  const tables: DatabaseLayout['tables'] = {};
  let userColumnTypes: ReadonlyMap<string, string> | undefined;
  for (const kind of Object.keys(DJANGO_COLUMNS) as TableKind[]) {
    const present = await connection.columns(DJANGO_TABLES[kind]);
    if (kind === 'users') userColumnTypes = present;
    const layout = tableLayout(connection, kind, present);
    if (layout !== undefined) tables[kind] = layout;
  }
  if (tables.users === undefined || userColumnTypes === undefined) {
    const defaultUserModel = (await connection.columns('auth_user')) !== undefined;
    throw new LatchkeyError(
      'invalid_input',
      `The ${connection.description} has no users_user table, so it is not a cookiecutter-django project's (users.User)` +
        (defaultUserModel ? ": it has Django's default auth_user, which import-django does not read." : '.'),
    );
  }
  const userColumns = djangoUserColumns(new Set(userColumnTypes.keys()), projectColumns);
  // A project's column may be one Latchkey reads too (a field from first_name): selected once.
  const users = tables.users;
  tables.users = { ...users, columns: [...new Set([...users.columns, ...userColumns.project])] };
  const booleanColumns = userColumns.project.filter((column) => /^bool(ean)?$/.test(userColumnTypes.get(column) ?? ''));
  return { tables, permissions: await findPermissionTables(connection), userColumns, booleanColumns };
}

/** SQLite's 0 and 1 of a `bool` column as false and true; any other value is left for the import to refuse. */
function withBooleans(record: DjangoRecord, columns: readonly string[]): DjangoRecord {
  if (columns.length === 0) return record;
  const plain: Record<string, unknown> = { ...record };
  for (const column of columns) if (plain[column] === 0 || plain[column] === 1) plain[column] = plain[column] === 1;
  return plain;
}

class DatabaseSource implements DjangoSource {
  readonly description: string;

  constructor(
    private readonly connection: DjangoSqlConnection,
    private readonly layout: DatabaseLayout,
  ) {
    this.description = connection.description;
  }

  loginField(): Promise<DjangoLoginField> {
    return Promise.resolve(this.layout.tables.users?.columns.includes('username') ? 'username' : 'email');
  }

  userColumns(): Promise<DjangoUserColumns> {
    return Promise.resolve(this.layout.userColumns);
  }

  has(kind: DjangoKind): Promise<boolean> {
    if (kind === 'permissions') return Promise.resolve(this.layout.permissions.direct || this.layout.permissions.groups);
    return Promise.resolve(this.layout.tables[kind] !== undefined);
  }

  async count(kind: DjangoKind): Promise<number> {
    if (!(await this.has(kind))) return 0;
    const statement = kind === 'permissions' ? countPermissionsStatement(this.layout.permissions) : `select count(*) as count from ${quote(DJANGO_TABLES[kind])}`;
    const [row] = await this.connection.query(statement);
    return Number(row?.count ?? 0);
  }

  rows<K extends DjangoKind>(kind: K, batchSize: number): AsyncIterable<DjangoRows[K][]> {
    if (!Number.isSafeInteger(batchSize) || batchSize < 1) throw new RangeError(`batchSize must be a positive integer, not ${batchSize}.`);
    const { project } = this.layout.userColumns;
    const { booleanColumns } = this.layout;
    const map = (kind === 'users' ? (record: DjangoRecord) => mapDjangoUser(withBooleans(record, booleanColumns), project) : DJANGO_RECORD_MAPPERS[kind]) as (record: DjangoRecord) => DjangoRows[K];
    const batches = kind === 'permissions' ? this.permissionBatches(batchSize) : this.tableBatches(kind, batchSize);
    return (async function* () {
      for await (const records of batches) yield records.map(map);
    })();
  }

  private async *tableBatches(kind: TableKind, batchSize: number): AsyncGenerator<DjangoRecord[]> {
    const layout = this.layout.tables[kind];
    if (layout === undefined) return;
    const select = `select ${layout.columns.map(quote).join(', ')} from ${quote(layout.table)}`;
    const order = `order by ${quote(layout.key)}`;
    let after: unknown;
    for (;;) {
      const records =
        after === undefined
          ? await this.connection.query(`${select} ${order} limit $1`, [batchSize])
          : await this.connection.query(`${select} where ${quote(layout.key)} > $1 ${order} limit $2`, [after, batchSize]);
      if (records.length > 0) yield records;
      if (records.length < batchSize) return;
      after = records.at(-1)?.[layout.key];
    }
  }

  private async *permissionBatches(batchSize: number): AsyncGenerator<DjangoRecord[]> {
    const tables = this.layout.permissions;
    if (!tables.direct && !tables.groups) return;
    let after: DjangoRecord | undefined;
    for (;;) {
      const records =
        after === undefined
          ? await this.connection.query(permissionBatchStatement(tables, false), [batchSize])
          : await this.connection.query(permissionBatchStatement(tables, true), [after.user_id, after.group_key, after.permission_id, batchSize]);
      if (records.length > 0) yield records;
      if (records.length < batchSize) return;
      after = records.at(-1);
    }
  }

  close(): Promise<void> {
    return this.connection.close();
  }
}

/**
 * Opens a Django project's database, `sqlite:PATH` or `postgres://...`, read-only. Refuses, with
 * the reason, a URL it cannot open and a database without cookiecutter-django's users_user.
 */
export async function openDjangoDatabase(url: string, options: DjangoDatabaseOptions = {}): Promise<DjangoSource> {
  const connection = await openDjangoSqlConnection(url);
  try {
    return new DatabaseSource(connection, await readLayout(connection, options.projectColumns ?? []));
  } catch (error) {
    await connection.close();
    throw error;
  }
}
