/**
 * `manage import-django`: a cookiecutter-django project's accounts moved into Latchkey with nothing
 * lost. Every kind of row is read from the source in batches, made into Latchkey's rows
 * (../convert.ts), settled against what Latchkey holds (../conflicts.ts) and written through the
 * target in ONE transaction, so an import that fails half way leaves Latchkey as it was. Rows
 * keep their Django ids, so a second run finds every row already there and writes nothing. A row
 * that refers to one not imported (an address of a skipped user) is skipped too, with that
 * reason: nothing is attached to the wrong account. The project's own user fields come with the
 * users (../user-fields.ts); users_user's columns that nothing reads are named in the report.
 */
import type { LatchkeyDeps } from '../../deps.js';
import { docsPage } from '../../core/docs-page.js';
import { LatchkeyError } from '../../core/errors.js';
import type { EmailAddress, User } from '../../account/model.js';
import type { SocialAccount, SocialApp, SocialToken } from '../../socialaccount/model.js';
import type { ApiToken } from '../../tokens/model.js';
import { sealAppSecret } from '../../socialaccount/directory.js';
import { storableApp } from '../../socialaccount/flows/stored-app-rules.js';
import {
  CLEAR_TEXT,
  convertAuthenticator,
  convertEmailAddress,
  convertPermission,
  convertSocialAccount,
  convertSocialToken,
  convertToken,
  convertUser,
  isReadableHash,
  type ConvertContext,
  type Converted,
  type DjangoDecrypt,
} from '../convert.js';
import { conflictCheckedWriter, type AccountImportWriter } from '../conflict-checked-writer.js';
import { DJANGO_KINDS, type DjangoKind, type DjangoRows, type DjangoSocialApp } from '../model.js';
import type { AccountImportTarget, DjangoSource, ImportedAuthenticator, ImportedPermission, RowOutcome } from '../ports.js';
import { describeUnfitValue, userFieldColumnsProblem, type UnfitValue } from '../user-fields.js';

export type ImportDeps = Pick<LatchkeyDeps, 'settings' | 'clock' | 'providerDirectory' | 'userFields'>;

export interface ImportOptions {
  /** Report what would be imported, and write nothing. */
  dryRun: boolean;
  /** Rows read and written at a time (default 1000). */
  batchSize?: number;
  decrypt?: DjangoDecrypt;
  /** Called after each batch, for a progress line on large imports. */
  onProgress?: (progress: { kind: DjangoKind; done: number; total: number }) => void;
}

export interface KindCount {
  read: number;
  inserted: number;
  /** Already in Latchkey (an earlier run's): left as they are. */
  present: number;
  skipped: number;
}

export interface SkippedRow {
  kind: DjangoKind;
  /** The row's id in the source (a token's is its user's: its key is a secret). */
  id: string;
  reason: string;
}

export interface ImportReport {
  dryRun: boolean;
  counts: Record<DjangoKind, KindCount>;
  skipped: SkippedRow[];
  /** Users imported whose password hash Latchkey cannot check (an algorithm it does not have): they must reset their password. */
  unreadablePasswords: number[];
  /** users_user's columns that neither Latchkey nor a declared user field reads: not imported (alphabetical). */
  undeclaredColumns: string[];
  /** Declared user fields whose column users_user lacks: their users get the field's empty value. */
  fieldsWithoutColumn: { field: string; column: string }[];
}

/** How many unfit values the error that stops the import names; it counts the others. */
const UNFIT_VALUES_SHOWN = 20;

/** Values of users_user that do not fit the project's fields, met while reading the users. */
interface UnfitValues {
  count: number;
  first: UnfitValue[];
}

/**
 * The import stops when a value does not fit its field, rather than change it or leave out its
 * user (and everything of theirs): the fix is nearly always the declaration (a longer maxLength,
 * a choice more, the right type), after which a run imports everyone.
 */
function unfitValuesError(unfit: UnfitValues): LatchkeyError {
  const lines = unfit.first.map((value) => `  ${describeUnfitValue(value)}`);
  if (unfit.count > unfit.first.length) lines.push(`  and ${unfit.count - unfit.first.length} more.`);
  // For the operator running the import (the CLI), in English as the CLI's output: no catalog message.
  const forOperator =
    `${unfit.count} value(s) of users_user do not fit the user fields this project declares, so nothing was imported. ` +
    `Change the declaration (a longer maxLength, another choice, the right type) or the values in Django, and run the import again (${docsPage('migrating-from-django.md')}):\n${lines.join('\n')}`;
  return new LatchkeyError('invalid_input', forOperator);
}

const DEFAULT_BATCH_SIZE = 1000;

/** How one kind is made into Latchkey's rows and written. */
interface KindImport<K extends DjangoKind, T> {
  idOf(row: DjangoRows[K]): string;
  /** Why the row cannot be imported because a row it belongs to was not (its user, its account), or undefined. */
  dependsOn?(row: DjangoRows[K], imported: ImportedIds): string | undefined;
  convert(row: DjangoRows[K]): Converted<T>;
  write(writer: AccountImportWriter, rows: T[]): Promise<RowOutcome[]>;
  /** Called with each row written or found there, so rows that depend on it may follow. */
  accepted?(row: T, imported: ImportedIds): void;
}

/** The ids, in the source, of the rows now in Latchkey (written by this run or an earlier one). */
interface ImportedIds {
  users: Set<number>;
  socialApps: Set<number>;
  socialAccounts: Set<number>;
}

function userDependency(userId: number, imported: ImportedIds): string | undefined {
  return imported.users.has(userId) ? undefined : `its user (id ${userId}) was not imported`;
}

/** Each kind's rows as Latchkey stores them. */
interface LatchkeyRows {
  users: User;
  emailAddresses: EmailAddress;
  tokens: ApiToken;
  authenticators: ImportedAuthenticator;
  socialApps: SocialApp;
  socialAccounts: SocialAccount;
  socialTokens: SocialToken;
  permissions: ImportedPermission;
}

type KindImports = { [K in DjangoKind]: KindImport<K, LatchkeyRows[K]> };

function kindImports(deps: ImportDeps, context: ConvertContext, report: ImportReport, unfit: UnfitValues): KindImports {
  const usernameType = deps.settings.USERNAME_TYPE;
  return {
    users: {
      idOf: (user) => String(user.id),
      convert: (user) => {
        const converted = convertUser(user, usernameType, deps.userFields);
        if (!('unfit' in converted)) return converted;
        unfit.count += converted.unfit.length;
        unfit.first.push(...converted.unfit.slice(0, UNFIT_VALUES_SHOWN - unfit.first.length));
        // Not written, and the import stops once every user has been read (importDjangoAccounts).
        return { skipped: 'a value does not fit its user field' };
      },
      write: (writer, rows) => writer.users(rows),
      accepted: (user, imported) => {
        imported.users.add(user.id);
        if (!isReadableHash(user.password)) report.unreadablePasswords.push(user.id);
      },
    },
    emailAddresses: {
      idOf: (address) => String(address.id),
      dependsOn: (address, imported) => userDependency(address.userId, imported),
      convert: convertEmailAddress,
      write: (writer, rows) => writer.emailAddresses(rows),
    },
    tokens: {
      idOf: (token) => `of user ${token.userId}`,
      dependsOn: (token, imported) => userDependency(token.userId, imported),
      convert: (token) => convertToken(context, token),
      write: (writer, rows) => writer.apiTokens(rows),
    },
    authenticators: {
      idOf: (authenticator) => String(authenticator.id),
      dependsOn: (authenticator, imported) => userDependency(authenticator.userId, imported),
      convert: (authenticator) => convertAuthenticator(context, authenticator),
      write: (writer, rows) => writer.authenticators(rows),
    },
    socialApps: {
      idOf: (app) => String(app.id),
      convert: (app) => convertSocialApp(deps, app),
      write: (writer, rows) => writer.socialApps(rows),
      accepted: (app, imported) => imported.socialApps.add(app.id),
    },
    socialAccounts: {
      idOf: (account) => String(account.id),
      dependsOn: (account, imported) => userDependency(account.userId, imported),
      convert: convertSocialAccount,
      write: (writer, rows) => writer.socialAccounts(rows),
      accepted: (account, imported) => imported.socialAccounts.add(account.id),
    },
    socialTokens: {
      idOf: (token) => String(token.id),
      dependsOn: (token, imported) => {
        if (!imported.socialAccounts.has(token.accountId)) return `its social account (id ${token.accountId}) was not imported`;
        if (token.appId !== null && !imported.socialApps.has(token.appId)) return `its social app (id ${token.appId}) was not imported`;
        return undefined;
      },
      convert: (token) => convertSocialToken(context, token),
      write: (writer, rows) => writer.socialTokens(rows),
    },
    permissions: {
      idOf: (grant) => `${grant.appLabel}.${grant.codename} of user ${grant.userId}${grant.group === null ? '' : ` (group "${grant.group}")`}`,
      dependsOn: (grant, imported) => userDependency(grant.userId, imported),
      convert: convertPermission,
      write: (writer, rows) => writer.adminPermissions(rows),
    },
  };
}

/**
 * An allauth SocialApp, held to the rules an app stored in Latchkey's admin is held to (a provider
 * Latchkey has, settings its kind can use). allauth before 0.55 named an OpenID Connect server's
 * app by the server's id in `provider`; such an app is skipped with what to do instead: its
 * social accounts still import, and sign in once SOCIALACCOUNT_PROVIDERS has an app of that
 * provider_id.
 */
function convertSocialApp(deps: ImportDeps, app: DjangoSocialApp): Converted<SocialApp> {
  const registry = deps.providerDirectory.registry;
  if (registry.kind(app.provider) === undefined) {
    return { skipped: `Latchkey has no provider "${app.provider}"; if it is an OpenID Connect server, configure an openid_connect app with provider_id "${app.provider}" (its accounts are imported either way)` };
  }
  try {
    const checked = storableApp(deps.providerDirectory, { provider: app.provider, providerId: app.providerId, name: app.name, clientId: app.clientId, key: app.key, settings: app.settings }, app.secret);
    const { provider, providerId, name, clientId, key, settings } = checked;
    return { row: { id: app.id, provider, providerId, name, clientId, key, settings, sealedSecret: sealAppSecret(deps.settings.SECRET_KEY, checked, app.secret) } };
  } catch (error) {
    if (error instanceof LatchkeyError) return { skipped: error.message };
    throw error;
  }
}

async function importKind<K extends DjangoKind>(
  source: DjangoSource,
  writer: AccountImportWriter,
  kind: K,
  rules: KindImports[K],
  state: { report: ImportReport; imported: ImportedIds; batchSize: number; onProgress: ImportOptions['onProgress'] },
): Promise<void> {
  const { report, imported } = state;
  const count = report.counts[kind];
  const total = await source.count(kind);
  for await (const batch of source.rows(kind, state.batchSize)) {
    const converted: { id: string; row: LatchkeyRows[K] }[] = [];
    for (const row of batch) {
      count.read++;
      const id = rules.idOf(row);
      const result = rules.dependsOn?.(row, imported) ?? rules.convert(row);
      if (typeof result === 'string' || 'skipped' in result) {
        count.skipped++;
        report.skipped.push({ kind, id, reason: typeof result === 'string' ? result : result.skipped });
      } else converted.push({ id, row: result.row });
    }
    const outcomes = converted.length === 0 ? [] : await rules.write(writer, converted.map((entry) => entry.row));
    outcomes.forEach((outcome, index) => {
      const { id, row } = converted[index]!;
      if (typeof outcome === 'object') {
        count.skipped++;
        report.skipped.push({ kind, id, reason: outcome.skipped });
        return;
      }
      if (outcome === 'inserted') count.inserted++;
      else count.present++;
      rules.accepted?.(row, imported);
    });
    state.onProgress?.({ kind, done: count.read, total });
  }
}

/**
 * Imports everything the source has. Refuses, before reading a row, a source whose users log in
 * by the other field than this project's users (USERNAME_TYPE): their logins would not carry over;
 * and a user field read from the password column. Stops, writing nothing, when a value of
 * users_user does not fit its user field, naming every such value.
 */
export async function importDjangoAccounts(deps: ImportDeps, source: DjangoSource, target: AccountImportTarget, options: ImportOptions): Promise<ImportReport> {
  const loginField = await source.loginField();
  if (loginField !== deps.settings.USERNAME_TYPE) {
    throw new LatchkeyError(
      'configuration_invalid',
      `The Django project's users log in by ${loginField} (its users_user ${loginField === 'email' ? 'has no username column' : 'has a username column'}), but this project's username_type is "${deps.settings.USERNAME_TYPE}". Import into a project generated with --username-type ${loginField}.`,
    );
  }
  const columns = await source.userColumns();
  const columnsProblem = userFieldColumnsProblem(deps.userFields, columns);
  if (columnsProblem !== undefined) throw new LatchkeyError('configuration_invalid', columnsProblem);
  const absent = new Set(columns.absent);
  const counts = Object.fromEntries(DJANGO_KINDS.map((kind) => [kind, { read: 0, inserted: 0, present: 0, skipped: 0 }])) as Record<DjangoKind, KindCount>;
  const report: ImportReport = {
    dryRun: options.dryRun,
    counts,
    skipped: [],
    unreadablePasswords: [],
    undeclaredColumns: [...columns.unread].sort(),
    fieldsWithoutColumn: deps.userFields.filter((field) => absent.has(field.djangoColumn)).map((field) => ({ field: field.name, column: field.djangoColumn })),
  };
  const context: ConvertContext = { settings: deps.settings, decrypt: options.decrypt ?? CLEAR_TEXT, now: deps.clock.now() };
  const unfit: UnfitValues = { count: 0, first: [] };
  const imports = kindImports(deps, context, report, unfit);
  const state = { report, imported: { users: new Set<number>(), socialApps: new Set<number>(), socialAccounts: new Set<number>() }, batchSize: options.batchSize ?? DEFAULT_BATCH_SIZE, onProgress: options.onProgress };
  return target.transaction(options.dryRun, async (tables) => {
    const writer = conflictCheckedWriter(tables, deps.settings.USERNAME_TYPE);
    for (const kind of DJANGO_KINDS) {
      await importKind(source, writer, kind, imports[kind], state);
      // Thrown inside the transaction: the users written so far are rolled back with it.
      if (kind === 'users' && unfit.count > 0) throw unfitValuesError(unfit);
    }
    return report;
  });
}

