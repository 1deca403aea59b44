/**
 * One Django row, keyed by column name, as the model's row type: the one place that says which
 * column holds what, shared by the database source (which reads these columns) and the dumpdata
 * source (which renames a dump's fields to them: `user` to `user_id`, `pk` to `id`).
 */
import { DJANGO_TABLES, type DjangoKind, type DjangoRows, type DjangoUser, type DjangoUserColumns } from '../../django-import/model.js';
import { RecordReader, type DjangoRecord } from './values.js';

/**
 * cookiecutter's `name`; a user model that kept Django's first and last names instead gives them
 * joined, so that nothing the admin showed is lost.
 */
function userName(row: RecordReader): string {
  if (row.has('name')) return row.text('name');
  return [row.optionalText('first_name'), row.optionalText('last_name')]
    .filter((part) => part !== null && part !== '')
    .join(' ');
}

/**
 * A users_user record as the model's user, with the values of `projectColumns` (the declared user
 * fields' columns) as the record holds them: each source has made them plain already, and
 * whether they fit their fields is the import's to judge.
 */
export function mapDjangoUser(record: DjangoRecord, projectColumns: readonly string[]): DjangoUser {
  const row = new RecordReader(DJANGO_TABLES.users, record);
  return {
    id: row.id('id'),
    username: row.optionalText('username'),
    email: row.optionalText('email') ?? '',
    name: userName(row),
    password: row.text('password'),
    isActive: row.boolean('is_active'),
    isStaff: row.boolean('is_staff'),
    isSuperuser: row.boolean('is_superuser'),
    dateJoined: row.instant('date_joined'),
    lastLogin: row.optionalInstant('last_login'),
    projectColumns: Object.fromEntries(projectColumns.filter((column) => record[column] !== undefined).map((column) => [column, record[column]])),
  };
}

/** The mapping of each kind, from a record with the columns of its table (see DJANGO_COLUMNS); users without the project's columns. */
export const DJANGO_RECORD_MAPPERS: { [K in DjangoKind]: (record: DjangoRecord) => DjangoRows[K] } = {
  users: (record) => mapDjangoUser(record, []),
  emailAddresses(record) {
    const row = new RecordReader(DJANGO_TABLES.emailAddresses, record);
    return { id: row.id('id'), userId: row.id('user_id'), email: row.text('email'), verified: row.boolean('verified'), primary: row.boolean('primary') };
  },
  tokens(record) {
    // Messages name the token by its user: its key is the credential itself.
    const row = new RecordReader(DJANGO_TABLES.tokens, record, 'user_id');
    return { key: row.text('key'), userId: row.id('user_id'), created: row.instant('created') };
  },
  authenticators(record) {
    const row = new RecordReader(DJANGO_TABLES.authenticators, record);
    return {
      id: row.id('id'),
      userId: row.id('user_id'),
      type: row.text('type'),
      data: row.json('data'),
      // allauth's first mfa releases had neither column.
      createdAt: row.optionalInstant('created_at'),
      lastUsedAt: row.optionalInstant('last_used_at'),
    };
  },
  socialApps(record) {
    const row = new RecordReader(DJANGO_TABLES.socialApps, record);
    return {
      id: row.id('id'),
      provider: row.text('provider'),
      // allauth 0.55 added both; older apps read as '' and {}.
      providerId: row.optionalText('provider_id') ?? '',
      name: row.text('name'),
      clientId: row.text('client_id'),
      secret: row.optionalText('secret') ?? '',
      key: row.optionalText('key') ?? '',
      settings: row.json('settings'),
    };
  },
  socialAccounts(record) {
    const row = new RecordReader(DJANGO_TABLES.socialAccounts, record);
    return {
      id: row.id('id'),
      userId: row.id('user_id'),
      provider: row.text('provider'),
      uid: row.text('uid'),
      extraData: row.json('extra_data'),
      dateJoined: row.instant('date_joined'),
      lastLogin: row.instant('last_login'),
    };
  },
  socialTokens(record) {
    const row = new RecordReader(DJANGO_TABLES.socialTokens, record);
    return {
      id: row.id('id'),
      appId: row.optionalId('app_id'),
      accountId: row.id('account_id'),
      token: row.text('token'),
      tokenSecret: row.optionalText('token_secret') ?? '',
      expiresAt: row.optionalInstant('expires_at'),
    };
  },
  permissions(record) {
    const row = new RecordReader('users_user_user_permissions', record, 'user_id');
    return { userId: row.id('user_id'), appLabel: row.text('app_label'), codename: row.text('codename'), group: row.optionalText('group_name') };
  },
};

/**
 * The columns read from each table: every one a mapper may use. A database whose table lacks one
 * of the optional columns (an older allauth's, or a user model without `username`) is read
 * without it; one lacking a required column is not the table we know.
 */
export const DJANGO_COLUMNS: Record<Exclude<DjangoKind, 'permissions'>, { required: readonly string[]; optional: readonly string[] }> = {
  users: {
    required: ['id', 'password', 'is_active', 'is_staff', 'is_superuser', 'date_joined'],
    optional: ['username', 'email', 'name', 'first_name', 'last_name', 'last_login'],
  },
  emailAddresses: { required: ['id', 'user_id', 'email', 'verified', 'primary'], optional: [] },
  tokens: { required: ['key', 'user_id', 'created'], optional: [] },
  authenticators: { required: ['id', 'user_id', 'type', 'data'], optional: ['created_at', 'last_used_at'] },
  socialApps: { required: ['id', 'provider', 'name', 'client_id'], optional: ['provider_id', 'secret', 'key', 'settings'] },
  socialAccounts: { required: ['id', 'user_id', 'provider', 'uid', 'extra_data', 'date_joined', 'last_login'], optional: [] },
  socialTokens: { required: ['id', 'account_id', 'token'], optional: ['app_id', 'token_secret', 'expires_at'] },
};

/**
 * The users_user columns Latchkey's import reads for its own fields; with a dump's two
 * many-to-many fields, which it reads for the permissions.
 */
const LATCHKEY_USER_COLUMNS: ReadonlySet<string> = new Set([...DJANGO_COLUMNS.users.required, ...DJANGO_COLUMNS.users.optional, 'groups', 'user_permissions']);

/** users_user's columns beside Latchkey's: `present` is every column the table has, `asked` the declared fields' columns. */
export function djangoUserColumns(present: ReadonlySet<string>, asked: readonly string[]): DjangoUserColumns {
  const wanted = new Set(asked);
  return {
    project: asked.filter((column) => present.has(column)),
    absent: asked.filter((column) => !present.has(column)),
    unread: [...present].filter((column) => !LATCHKEY_USER_COLUMNS.has(column) && !wanted.has(column)),
  };
}
