/**
 * Turns a dump's entries, as they stream from the file, into the model's rows: each entry's fields
 * renamed to its table's columns (`pk` to `id`, `user` to `user_id`) and read by the same mappers
 * as the database's rows (records.ts), so a value means the same from either source. An entry is
 * mapped as soon as it is read and its parsed JSON dropped, so a dump costs about one copy of its
 * rows in memory. Only what needs the whole dump waits for the end: an entry naming a user by
 * natural key before that user's entry (Django's dumpdata writes users first, a hand-made dump
 * need not), and users' permissions, which may name groups and permissions dumped later.
 */
import { DJANGO_KINDS, type DjangoKind, type DjangoLoginField, type DjangoRows } from '../../django-import/model.js';
import { PermissionReferences, UnresolvedReferenceError, UserReferences, type DumpEntry } from './dumpdata-references.js';
import { DJANGO_RECORD_MAPPERS } from './records.js';
import type { DjangoRecord } from './values.js';

type ImportedKind = Exclude<DjangoKind, 'permissions'>;
export type DumpRows = { [K in DjangoKind]: DjangoRows[K][] };

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

/** Ids as numbers, token keys as text (by code unit, as SQLite and a C collation order them). */
function comparePrimaryKeys(a: unknown, b: unknown): number {
  const [left, right] = [a as number | string, b as number | string];
  return left < right ? -1 : left > right ? 1 : 0;
}

function sortByKey<T>(rows: T[], key: (row: T) => unknown): void {
  // A dump from dumpdata is in primary-key order already: checking costs less than sorting.
  const sorted = rows.every((row, index) => index === 0 || comparePrimaryKeys(key(rows[index - 1]!), key(row)) <= 0);
  if (!sorted) rows.sort((a, b) => comparePrimaryKeys(key(a), key(b)));
}

export class DumpCollector {
  readonly rows: DumpRows = Object.fromEntries(DJANGO_KINDS.map((kind) => [kind, []])) as unknown as DumpRows;
  /** The kinds the dump has entries of. */
  readonly present = new Set<DjangoKind>();
  private readonly users = new UserReferences();
  private readonly waitingForTheirUser: { kind: ImportedKind; entry: DumpEntry }[] = [];
  /** Users with permissions or groups: their pk and those two fields. */
  private readonly grants: DumpEntry[] = [];
  private readonly referenced: Record<(typeof REFERENCED)[keyof typeof REFERENCED], DumpEntry[]> = { groups: [], permissions: [], contentTypes: [] };

  get loginField(): DjangoLoginField {
    return this.users.loginField ?? 'email';
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
    const user = DJANGO_RECORD_MAPPERS.users(IMPORTED.users.record(entry, undefined));
    this.rows.users.push(user);
    this.users.add(entry, user.id);
    const { user_permissions: permissions, groups } = entry.fields;
    if ((Array.isArray(permissions) && permissions.length > 0) || (Array.isArray(groups) && groups.length > 0)) {
      this.grants.push({ model: entry.model, pk: user.id, fields: { user_permissions: permissions, groups } });
    }
  }

  private push(kind: ImportedKind, entry: DumpEntry, userId: unknown): void {
    const map = DJANGO_RECORD_MAPPERS[kind] as (record: DjangoRecord) => DjangoRows[ImportedKind];
    (this.rows[kind] as DjangoRows[ImportedKind][]).push(map(IMPORTED[kind].record(entry, userId)));
  }

  /** Once every entry is in: resolves what waited, puts each kind in primary-key order, and lists the permissions. */
  finish(): DumpRows {
    for (const { kind, entry } of this.waitingForTheirUser.splice(0)) this.push(kind, entry, this.users.resolve(entry));
    for (const kind of DJANGO_KINDS) {
      if (kind === 'tokens') sortByKey(this.rows.tokens, (token) => token.key);
      else if (kind !== 'permissions') sortByKey(this.rows[kind] as { id: number }[], (row) => row.id);
    }
    if (this.present.has('users')) this.present.add('permissions');
    const references = new PermissionReferences(this.referenced);
    sortByKey(this.grants, (user) => user.pk);
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
