/**
 * A Django project's rows made into Latchkey's, one row at a time: each is either the row
 * Latchkey stores (its secrets sealed as Latchkey seals its own) or the reason it cannot be.
 * Nothing here reads or writes a database; flows/import-accounts.ts feeds the rows through.
 */
import type { EmailAddress, User } from '../account/model.js';
import { ADMIN_ACTIONS, ADMIN_MODELS, type AdminAction, type AdminModel } from '../admin/model.js';
import { HASHER_NAMES } from '../config/choices.js';
import type { Settings, UsernameType } from '../config/settings.js';
import type { UserField } from '../core/user-fields.js';
import { tryNormalizeEmail } from '../core/identifiers.js';
import { docsPage } from '../core/docs-page.js';
import { algorithmOf } from '../account/passwords/hasher.js';
import { importedRecoveryCodesData, importedTotpData, recoveryCodeSet } from '../mfa/authenticators.js';
import { webauthnKey } from '../mfa/webauthn.js';
import type { Authenticator } from '../mfa/model.js';
import { UID_MAX_LENGTH, type SocialAccount, type SocialToken } from '../socialaccount/model.js';
import { sealProviderTokens } from '../socialaccount/tokens.js';
import { isApiTokenKeyFormat, storedApiToken } from '../tokens/api-tokens.js';
import type { ApiToken } from '../tokens/model.js';
import type { DjangoAuthenticator, DjangoEmailAddress, DjangoPermission, DjangoSocialAccount, DjangoSocialToken, DjangoToken, DjangoUser } from './model.js';
import type { ImportedAuthenticator, ImportedPermission } from './ports.js';
import { convertUserFields, type UnfitValue } from './user-fields.js';

export type Converted<T> = { row: T } | { skipped: string };

/**
 * Opens what allauth.mfa's adapter encrypted (its `encrypt()` hook: a TOTP secret, a recovery
 * seed, migrated codes). allauth stores them in clear unless the project overrode the hook; a
 * project that did passes its own decrypt to the import (ManagementOptions.djangoDecrypt).
 */
export type DjangoDecrypt = (stored: string) => string;

export const CLEAR_TEXT: DjangoDecrypt = (stored) => stored;

export interface ConvertContext {
  settings: Settings;
  decrypt: DjangoDecrypt;
  now: Date;
}

const skipped = (reason: string): { skipped: string } => ({ skipped: reason });

/**
 * A user, with the password hash as Django wrote it: Latchkey reads Django's formats and replaces
 * a hash made with other parameters at the user's next login, as Django would. With the value of
 * each of the project's fields (user-fields.ts), or the values that do not fit them.
 */
export function convertUser(user: DjangoUser, usernameType: UsernameType, fields: readonly UserField[]): Converted<User> | { unfit: UnfitValue[] } {
  const email = user.email === '' ? '' : tryNormalizeEmail(user.email);
  if (email === undefined) return skipped('its email address is not one Latchkey can store');
  if (email === '' && usernameType === 'email') return skipped('it has no email address, which users of this project log in with');
  let username: string | null = null;
  if (usernameType === 'username') {
    username = (user.username ?? '').normalize('NFKC');
    if (username === '') return skipped('it has no username, which users of this project log in with');
  }
  const projectValues = convertUserFields(fields, user);
  if ('unfit' in projectValues) return projectValues;
  const { id, name, password, isActive, isStaff, isSuperuser, dateJoined, lastLogin } = user;
  return { row: { ...projectValues.values, id, username, email, name, password, isActive, isStaff, isSuperuser, dateJoined, lastLogin, language: '' } };
}

/** Whether Latchkey can check a password against the hash (an unusable one, `!...`, checks nothing and needs nothing). */
export function isReadableHash(password: string): boolean {
  return password.startsWith('!') || (HASHER_NAMES as readonly string[]).includes(algorithmOf(password));
}

export function convertEmailAddress(address: DjangoEmailAddress): Converted<EmailAddress> {
  const email = tryNormalizeEmail(address.email);
  if (email === undefined) return skipped('it is not an email address Latchkey can store');
  return { row: { id: address.id, userId: address.userId, email, verified: address.verified, primary: address.primary } };
}

/** A DRF token: its key keeps working, but Latchkey keeps only a keyed hash and a sealed copy. */
export function convertToken(context: ConvertContext, token: DjangoToken): Converted<ApiToken> {
  if (!isApiTokenKeyFormat(token.key)) return skipped('its key is not 40 lower-case hexadecimal characters, as Django REST framework makes them');
  return { row: storedApiToken(context, token.userId, token.key, token.created) };
}

function opened(context: ConvertContext, value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  try {
    return context.decrypt(value);
  } catch {
    return undefined;
  }
}

export function convertAuthenticator(context: ConvertContext, row: DjangoAuthenticator): Converted<ImportedAuthenticator> {
  const base = { id: row.id, userId: row.userId, createdAt: row.createdAt ?? context.now, lastUsedAt: row.lastUsedAt, credentialId: null };
  const as = (authenticator: Authenticator, usedRecoveryCodes: number[] = []): Converted<ImportedAuthenticator> => ({ row: { authenticator, usedRecoveryCodes } });
  switch (row.type) {
    case 'totp': {
      const secret = opened(context, row.data.secret);
      const data = secret === undefined ? undefined : importedTotpData(context.settings, row.userId, secret);
      return data ? as({ ...base, type: 'totp', data }) : skipped(`its TOTP secret cannot be read (if the project's MFA adapter encrypts it, pass djangoDecrypt: ${docsPage('migrating-from-django.md')})`);
    }
    case 'recovery_codes':
      return convertRecoveryCodes(context, row, (data, used) => as({ ...base, type: 'recovery_codes', data }, used));
    case 'webauthn': {
      const credential = row.data.credential as { id?: unknown } | undefined;
      const credentialId = typeof credential?.id === 'string' ? credential.id : undefined;
      const authenticator: Authenticator = { ...base, type: 'webauthn', data: row.data, credentialId: credentialId ?? null };
      if (credentialId === undefined || webauthnKey(authenticator) === undefined) return skipped('its WebAuthn credential cannot be read');
      return as(authenticator);
    }
    default:
      return skipped(`Latchkey has no authenticators of type "${row.type}"`);
  }
}

function convertRecoveryCodes(
  context: ConvertContext,
  row: DjangoAuthenticator,
  as: (data: Record<string, unknown>, used: number[]) => Converted<ImportedAuthenticator>,
): Converted<ImportedAuthenticator> {
  const unreadable = skipped(`its recovery codes cannot be read (if the project's MFA adapter encrypts them, pass djangoDecrypt: ${docsPage('migrating-from-django.md')})`);
  const migrated = row.data.migrated_codes;
  if (Array.isArray(migrated)) {
    const codes = migrated.map((code) => opened(context, code));
    if (codes.some((code) => code === undefined)) return unreadable;
    const imported = importedRecoveryCodesData(context.settings, row.userId, { codes: codes as string[] });
    return imported ? as(imported.data, imported.usedIndices) : unreadable;
  }
  const seed = opened(context, row.data.seed);
  const usedMask = row.data.used_mask ?? 0;
  if (seed === undefined || typeof usedMask !== 'number' || !Number.isInteger(usedMask) || usedMask < 0) return unreadable;
  const imported = importedRecoveryCodesData(context.settings, row.userId, { seed, usedMask });
  return imported ? as(imported.data, imported.usedIndices) : unreadable;
}

/** The codes of an imported set that are still unused, for the reverse check. */
export function expectedUnusedRecoveryCodes(settings: Settings, authenticator: Authenticator, usedIndices: readonly number[]): string[] | undefined {
  const used = new Set(usedIndices);
  return recoveryCodeSet(settings, authenticator)?.filter((_, index) => !used.has(index));
}

export function convertSocialAccount(account: DjangoSocialAccount): Converted<SocialAccount> {
  if (account.uid === '' || [...account.uid].length > UID_MAX_LENGTH) return skipped(`its uid is empty or longer than ${UID_MAX_LENGTH} characters`);
  const { id, userId, provider, uid, extraData, dateJoined, lastLogin } = account;
  return { row: { id, userId, provider, uid, extraData, dateJoined, lastLogin } };
}

/** A provider's tokens, sealed to their account and app as Latchkey seals the ones it gets itself. */
export function convertSocialToken(context: ConvertContext, token: DjangoSocialToken): Converted<SocialToken> {
  if (token.token === '') return skipped('it holds no access token');
  const sealed = sealProviderTokens(context.settings.SECRET_KEY, token.accountId, token.appId, token.token, token.tokenSecret);
  return { row: { id: token.id, accountId: token.accountId, appId: token.appId, ...sealed, expiresAt: token.expiresAt } };
}

/**
 * Django's codename `<action>_<model>` of an app, as the permission Latchkey's admin knows by the
 * same names. DRF's admin lists tokens through the proxy model `tokenproxy`; a grant on either
 * the token or its proxy is the same grant in Latchkey.
 */
export function convertPermission(grant: DjangoPermission): Converted<ImportedPermission> {
  const separator = grant.codename.indexOf('_');
  const action = grant.codename.slice(0, separator) as AdminAction;
  let model = `${grant.appLabel}.${grant.codename.slice(separator + 1)}`;
  if (model === 'authtoken.token') model = 'authtoken.tokenproxy';
  if (separator === -1 || !ADMIN_ACTIONS.includes(action)) return skipped(`Latchkey's admin has no permission like "${grant.appLabel}.${grant.codename}"`);
  if (!(ADMIN_MODELS as readonly string[]).includes(model)) return skipped(`Latchkey's admin does not manage "${model}"`);
  return { row: { userId: grant.userId, permission: { model: model as AdminModel, action } } };
}
