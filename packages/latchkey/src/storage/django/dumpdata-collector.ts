/**
 * Turns a dump's entries, as they stream from the file, into the model's rows: each entry's fields
 * renamed to its table's columns (`pk` to `id`, `user` to `user_id`) and read by the same mappers
 * as the database's rows (records.ts), so a value means the same from either source. An entry is
 * mapped as soon as it is read, its parsed JSON dropped and its row kept in a RowTable, column by
 * column outside V8's heap (dumpdata-row-table.ts): a 1,000,000-user dump is held in a few hundred
 * megabytes. Only what needs the whole dump waits for the end: an entry naming a user by natural
 * key before that user's entry (Django's dumpdata writes users first, a hand-made dump need not),
 * and users' permissions, which may name groups and permissions dumped later.
 */
import { DJANGO_KINDS, type DjangoKind, type DjangoLoginField, type DjangoRows, type DjangoUserColumns } from '../../django-import/model.js';
import { PermissionReferences, UnresolvedReferenceError, UserReferences, type DumpEntry } from './dumpdata-references.js';
import { RowTable, type RowLayout } from './dumpdata-row-table.js';
import { DJANGO_RECORD_MAPPERS, djangoUserColumns, mapDjangoUser } from './records.js';
import type { DjangoRecord } from './values.js';

type ImportedKind = Exclude<DjangoKind, 'permissions'>;
export type DumpRows = { [K in DjangoKind]: RowTable<DjangoRows[K]> };

/** How each kind's rows are kept: their fields in the order records.ts makes them, so that rows handed out are the rows mapped. */
export const ROW_LAYOUTS: { [K in DjangoKind]: RowLayout<DjangoRows[K]> } = {
  users: {
    id: 'number',
    username: 'text',
    email: 'text',
    name: 'text',
    password: 'text',
    isActive: 'boolean',
    isStaff: 'boolean',
    isSuperuser: 'boolean',
    dateJoined: 'instant',
    lastLogin: 'instant',
    projectColumns: 'jsonText',
  },
  emailAddresses: { id: 'number', userId: 'number', email: 'text', verified: 'boolean', primary: 'boolean' },
  tokens: { key: 'text', userId: 'number', created: 'instant' },
  authenticators: { id: 'number', userId: 'number', type: 'text', data: 'json', createdAt: 'instant', lastUsedAt: 'instant' },
  socialApps: { id: 'number', provider: 'text', providerId: 'text', name: 'text', clientId: 'text', secret: 'text', key: 'text', settings: 'json' },
  socialAccounts: { id: 'number', userId: 'number', provider: 'text', uid: 'text', extraData: 'json', dateJoined: 'instant', lastLogin: 'instant' },
  socialTokens: { id: 'number', appId: 'number', accountId: 'number', token: 'text', tokenSecret: 'text', expiresAt: 'instant' },
  permissions: { userId: 'number', appLabel: 'text', codename: 'text', group: 'text' },
};

/** The models read, with dumpdata's labels (lower case), and how an entry becomes its table's record. */
const IMPORTED: Record<ImportedKind, { model: string; record: (entry: DumpEntry, userId: unknown) => DjangoRecord }> = {
  users: { model: 'users.user', record: ({ pk, fields }) => ({ ...fields, id: pk }) },
  emailAddresses: { model: 'account.emailaddress', record: ({ pk, fields }, userId) => ({ ...fields, id: pk, user_id: userId }) },
  // The token's key is its primary key.
  tokens: { model: 'authtoken.token', record: ({ pk, fields }, userId) => ({ ...fields, key: pk, user_id: userId }) },
  authenticators: { model: 'mfa.authenticator', record: ({ pk, fields }, userId) => ({ ...fields, id: pk, user_id: userId }) },
  socialApps: { model: 'socialaccount.socialapp', record: ({ pk, fields }) => ({ ...fields, id: pk }) },
  socialAccounts: { model: 'socialaccount.socialaccount', record: ({ pk, fields }, userId) => ({ ...fields, id: pk, user_id: userId }) },
  socialTokens: { model: 'socialaccount.socialtoken', record: ({ pk, fields }) => ({ ...fields, id: pk, app_id: fields.app, account_id: fields.account }) },
};
const OWNED_BY_A_USER = new Set<ImportedKind>(['emailAddresses', 'tokens', 'authenticators', 'socialAccounts']);
const KIND_BY_MODEL = new Map(Object.entries(IMPORTED).map(([kind, { model }]) => [model, kind as ImportedKind]));

/** What users' permissions refer to, kept as dumped (a few hundred entries at most). */
const REFERENCED = { 'auth.group': 'groups', 'auth.permission': 'permissions', 'contenttypes.contenttype': 'contentTypes' } as const;

export class DumpCollector {
  readonly rows = Object.fromEntries(DJANGO_KINDS.map((kind) => [kind, new RowTable<object>(ROW_LAYOUTS[kind])])) as unknown as DumpRows;
  /** The kinds the dump has entries of. */
  readonly present = new Set<DjangoKind>();
  private readonly users = new UserReferences();
  private readonly waitingForTheirUser: { kind: ImportedKind; entry: DumpEntry }[] = [];
  /** Users with permissions or groups: their pk and those two fields. */
  private readonly grants: DumpEntry[] = [];
  private readonly referenced: Record<(typeof REFERENCED)[keyof typeof REFERENCED], DumpEntry[]> = { groups: [], permissions: [], contentTypes: [] };
  /** Every field the users.user entries have, as users_user's columns (`pk` as `id`). */
  private readonly userFieldNames = new Set<string>();

  /** `projectColumns`: the users.user fields the project's user fields come from (their djangoColumn). */
  constructor(private readonly projectColumns: readonly string[] = []) {}

  get loginField(): DjangoLoginField {
    return this.users.loginField ?? 'email';
  }

  /** Nothing to say of a dump without users: it shows no columns. */
  get userColumns(): DjangoUserColumns {
    if (this.userFieldNames.size === 0) return { project: [], absent: [], unread: [] };
    return djangoUserColumns(new Set(['id', ...this.userFieldNames]), this.projectColumns);
  }

  add(entry: DumpEntry): void {
    const model = entry.model.toLowerCase();
    if (model in REFERENCED) {
      this.referenced[REFERENCED[model as keyof typeof REFERENCED]].push(entry);
      return;
    }
    const kind = KIND_BY_MODEL.get(model);
    // Other models (sessions, sites, allauth's email confirmations) are not imported.
    if (kind === undefined) return;
    if (entry.pk === undefined || entry.pk === null) {
      throw new UnresolvedReferenceError(`its ${entry.model} entries have no pk: leave --natural-primary out of the dumpdata command, so that ids are kept`);
    }
    this.present.add(kind);
    if (kind === 'users') {
      this.addUser(entry);
      return;
    }
    const userId = OWNED_BY_A_USER.has(kind) ? this.users.tryResolve(entry) : undefined;
    if (OWNED_BY_A_USER.has(kind) && userId === undefined) this.waitingForTheirUser.push({ kind, entry });
    else this.push(kind, entry, userId);
  }

  private addUser(entry: DumpEntry): void {
    for (const field of Object.keys(entry.fields)) this.userFieldNames.add(field);
    const user = mapDjangoUser(IMPORTED.users.record(entry, undefined), this.projectColumns);
    this.rows.users.push(user);
    this.users.add(entry, user.id);
    const { user_permissions: permissions, groups } = entry.fields;
    if ((Array.isArray(permissions) && permissions.length > 0) || (Array.isArray(groups) && groups.length > 0)) {
      this.grants.push({ model: entry.model, pk: user.id, fields: { user_permissions: permissions, groups } });
    }
  }

  private push(kind: ImportedKind, entry: DumpEntry, userId: unknown): void {
    const map = DJANGO_RECORD_MAPPERS[kind] as (record: DjangoRecord) => DjangoRows[ImportedKind];
    (this.rows[kind] as RowTable<DjangoRows[ImportedKind]>).push(map(IMPORTED[kind].record(entry, userId)));
  }

  /** Once every entry is in: resolves what waited, puts each kind in primary-key order, and lists the permissions. */
  finish(): DumpRows {
    for (const { kind, entry } of this.waitingForTheirUser.splice(0)) this.push(kind, entry, this.users.resolve(entry));
    for (const kind of DJANGO_KINDS) {
      if (kind === 'tokens') this.rows.tokens.sortBy('key');
      else if (kind !== 'permissions') (this.rows[kind] as RowTable<{ id: number }>).sortBy('id');
    }
    if (this.present.has('users')) this.present.add('permissions');
    const references = new PermissionReferences(this.referenced);
    this.grants.sort((a, b) => (a.pk as number) - (b.pk as number));
    // By user, as the database source gives them: direct grants, then each group's.
    for (const user of this.grants) {
      const userId = user.pk as number;
      for (const { appLabel, codename } of references.permissionList(user, 'user_permissions')) this.rows.permissions.push({ userId, appLabel, codename, group: null });
      for (const group of references.groups(user)) {
        for (const { appLabel, codename } of group.permissions) this.rows.permissions.push({ userId, appLabel, codename, group: group.name });
      }
    }
    return this.rows;
  }
}
