/**
 * `manage import-django --verify`: the reverse check. A random sample of the source's users is
 * made into Latchkey's rows again, exactly as the import makes them, and compared with what
 * Latchkey holds: every column, and for what Latchkey keeps sealed (a token's key, a TOTP secret,
 * recovery codes, a provider's tokens, an app's secret) what it opens to; a user's columns include
 * the project's own fields. Nothing is written and nothing secret is reported: a difference names
 * the row and the field.
 */
import { isDeepStrictEqual } from 'node:util';
import type { User } from '../../account/model.js';
import type { LatchkeyDeps } from '../../deps.js';
import { authenticatorSecret, unusedRecoveryCodes } from '../../mfa/authenticators.js';
import type { Authenticator } from '../../mfa/model.js';
import { openAppSecret } from '../../socialaccount/directory.js';
import { openProviderToken } from '../../socialaccount/tokens.js';
import {
  CLEAR_TEXT,
  convertAuthenticator,
  convertEmailAddress,
  convertPermission,
  convertSocialAccount,
  convertSocialToken,
  convertToken,
  convertUser,
  expectedUnusedRecoveryCodes,
  type ConvertContext,
  type DjangoDecrypt,
} from '../convert.js';
import type { DjangoKind, DjangoRows, DjangoUser } from '../model.js';
import type { DjangoSource } from '../ports.js';

export type VerifyDeps = Pick<LatchkeyDeps, 'settings' | 'clock' | 'store' | 'userFields'>;

export interface VerifyOptions {
  /** How many users to check (default 200); every user when the source has fewer. */
  sample?: number;
  decrypt?: DjangoDecrypt;
  /** Picks the sample; Math.random unless a test wants it fixed. */
  random?: () => number;
}

export interface VerifyDifference {
  kind: DjangoKind;
  id: string;
  problem: string;
}

export interface VerifyReport {
  usersInSource: number;
  usersChecked: number;
  rowsChecked: number;
  differences: VerifyDifference[];
}

const BATCH = 1000;

const LATCHKEY_USER_FIELDS = ['username', 'email', 'name', 'password', 'isActive', 'isStaff', 'isSuperuser', 'dateJoined', 'lastLogin'] as const;

/** A uniform sample of `size` users, read in one pass (reservoir sampling), so a million users never sit in memory. */
async function sampleUsers(source: DjangoSource, size: number, random: () => number): Promise<{ sample: DjangoUser[]; seen: number }> {
  const sample: DjangoUser[] = [];
  let seen = 0;
  for await (const batch of source.rows('users', BATCH)) {
    for (const user of batch) {
      seen++;
      if (sample.length < size) sample.push(user);
      else {
        const slot = Math.floor(random() * seen);
        if (slot < size) sample[slot] = user;
      }
    }
  }
  return { sample, seen };
}

/** The rows of a kind that belong to the sample. */
async function rowsOf<K extends DjangoKind>(source: DjangoSource, kind: K, keep: (row: DjangoRows[K]) => boolean): Promise<DjangoRows[K][]> {
  const kept: DjangoRows[K][] = [];
  for await (const batch of source.rows(kind, BATCH)) kept.push(...batch.filter(keep));
  return kept;
}

const sameInstant = (a: Date | null, b: Date | null): boolean => (a === null || b === null ? a === b : a.getTime() === b.getTime());

function differingFields<T extends object>(expected: T, stored: T, fields: readonly (keyof T)[]): string[] {
  return fields.filter((field) => {
    const a = expected[field];
    const b = stored[field];
    return a instanceof Date || b instanceof Date ? !sameInstant(a as Date | null, b as Date | null) : !isDeepStrictEqual(a, b);
  }) as string[];
}

export async function verifyDjangoImport(deps: VerifyDeps, source: DjangoSource, options: VerifyOptions = {}): Promise<VerifyReport> {
  const { store, settings } = deps;
  const context: ConvertContext = { settings, decrypt: options.decrypt ?? CLEAR_TEXT, now: deps.clock.now() };
  const { sample, seen } = await sampleUsers(source, options.sample ?? 200, options.random ?? Math.random);
  const userIds = new Set(sample.map((user) => user.id));
  const report: VerifyReport = { usersInSource: seen, usersChecked: sample.length, rowsChecked: 0, differences: [] };
  const differ = (kind: DjangoKind, id: string | number, problem: string): void => {
    report.differences.push({ kind, id: String(id), problem });
  };
  const compare = (kind: DjangoKind, id: string | number, fields: string[]): void => {
    report.rowsChecked++;
    if (fields.length > 0) differ(kind, id, `differs in ${fields.join(', ')}`);
  };

  // Latchkey's fields, then the project's own (docs/user-fields.md), by name.
  const userFields = [...LATCHKEY_USER_FIELDS, ...deps.userFields.map((field) => field.name)] as (keyof User)[];
  for (const user of sample) {
    const expected = convertUser(user, settings.USERNAME_TYPE, deps.userFields);
    const stored = await store.users.findById(user.id);
    if ('skipped' in expected) continue;
    if ('unfit' in expected) differ('users', user.id, `does not fit the user field(s) ${[...new Set(expected.unfit.map((unfit) => unfit.field))].join(', ')}`);
    else if (!stored) differ('users', user.id, 'is not in Latchkey');
    else compare('users', user.id, differingFields(expected.row, stored, userFields));
  }

  for (const address of await rowsOf(source, 'emailAddresses', (row) => userIds.has(row.userId))) {
    const expected = convertEmailAddress(address);
    if ('skipped' in expected) continue;
    const stored = await store.emailAddresses.findById(address.id);
    if (!stored) differ('emailAddresses', address.id, 'is not in Latchkey');
    else compare('emailAddresses', address.id, differingFields(expected.row, stored, ['userId', 'email', 'verified', 'primary']));
  }

  for (const token of await rowsOf(source, 'tokens', (row) => userIds.has(row.userId))) {
    const expected = convertToken(context, token);
    if ('skipped' in expected) continue;
    const stored = await store.apiTokens.findForUser(token.userId);
    if (!stored) differ('tokens', `of user ${token.userId}`, 'is not in Latchkey');
    else compare('tokens', `of user ${token.userId}`, stored.keyHash === expected.row.keyHash ? [] : ['key']);
  }

  for (const row of await rowsOf(source, 'authenticators', (candidate) => userIds.has(candidate.userId))) {
    const expected = convertAuthenticator(context, row);
    if ('skipped' in expected) continue;
    const stored = (await store.authenticators.listForUser(row.userId)).find((authenticator) => authenticator.id === row.id);
    if (!stored) differ('authenticators', row.id, 'is not in Latchkey');
    else compare('authenticators', row.id, await authenticatorDifferences(deps, expected.row.authenticator, expected.row.usedRecoveryCodes, stored));
  }

  const accountIds = new Set<number>();
  for (const account of await rowsOf(source, 'socialAccounts', (row) => userIds.has(row.userId))) {
    accountIds.add(account.id);
    const expected = convertSocialAccount(account);
    if ('skipped' in expected) continue;
    const stored = await store.socialAccounts.findById(account.id);
    if (!stored) differ('socialAccounts', account.id, 'is not in Latchkey');
    else compare('socialAccounts', account.id, differingFields(expected.row, stored, ['userId', 'provider', 'uid', 'extraData', 'dateJoined']));
  }

  for (const token of await rowsOf(source, 'socialTokens', (row) => accountIds.has(row.accountId))) {
    const expected = convertSocialToken(context, token);
    // A token of an app the import skipped was skipped with it, and reported then.
    if ('skipped' in expected || (token.appId !== null && !(await store.socialApps.findById(token.appId)))) continue;
    const stored = (await store.socialTokens.listForAccount(token.accountId)).find((candidate) => candidate.id === token.id);
    if (!stored) differ('socialTokens', token.id, 'is not in Latchkey');
    else compare('socialTokens', token.id, isDeepStrictEqual(openProviderToken(deps, stored), openProviderToken(deps, expected.row)) ? [] : ['token']);
  }

  for (const app of await rowsOf(source, 'socialApps', () => true)) {
    const stored = await store.socialApps.findById(app.id);
    if (!stored) continue; // An app may be skipped by design (allauth's old OpenID Connect apps); the import reported it.
    const fields = differingFields({ provider: app.provider, clientId: app.clientId, key: app.key }, { provider: stored.provider, clientId: stored.clientId, key: stored.key }, ['provider', 'clientId', 'key']);
    compare('socialApps', app.id, openAppSecretOrEmpty(settings.SECRET_KEY, stored) === app.secret ? fields : [...fields, 'secret']);
  }

  for (const grant of await rowsOf(source, 'permissions', (row) => userIds.has(row.userId))) {
    const expected = convertPermission(grant);
    if ('skipped' in expected) continue;
    const held = await store.adminPermissions.listForUser(grant.userId);
    const { model, action } = expected.row.permission;
    compare('permissions', `${model}.${action} of user ${grant.userId}`, held.some((permission) => permission.model === model && permission.action === action) ? [] : ['presence']);
  }
  return report;
}

function openAppSecretOrEmpty(secretKey: string, app: Parameters<typeof openAppSecret>[1]): string | undefined {
  try {
    return openAppSecret(secretKey, app);
  } catch {
    return undefined;
  }
}

/** The fields in which a stored authenticator differs from the one the source makes, secrets compared opened. */
async function authenticatorDifferences(deps: VerifyDeps, expected: Authenticator, usedRecoveryCodes: number[], stored: Authenticator): Promise<string[]> {
  const fields = differingFields(expected, stored, ['userId', 'type', 'credentialId']);
  if (expected.type === 'totp' && !isDeepStrictEqual(authenticatorSecret(deps.settings, expected), authenticatorSecret(deps.settings, stored))) fields.push('secret');
  if (expected.type === 'recovery_codes' && !isDeepStrictEqual(expectedUnusedRecoveryCodes(deps.settings, expected, usedRecoveryCodes), await unusedRecoveryCodes(deps, stored))) fields.push('unused codes');
  if (expected.type === 'webauthn' && !isDeepStrictEqual(expected.data.credential, stored.data.credential)) fields.push('credential');
  return fields;
}
