/**
 * The import's conflict rules for MFA authenticators and social sign-in's apps, accounts and
 * tokens. As for accounts (account-conflicts.ts), a stored row always keeps its place: the
 * imported row that collides with it is skipped with the reason.
 */
import type { AuthenticatorType } from '../mfa/model.js';
import type { SocialAccount, SocialApp, SocialToken } from '../socialaccount/model.js';
import { definedValues, distinct, type KindConflicts } from './conflicts.js';
import type {
  AuthenticatorImportTable,
  ImportedAuthenticator,
  SocialAccountImportTable,
  SocialAppImportTable,
  SocialTokenImportTable,
  StoredAuthenticator,
  StoredSocialAccount,
  StoredSocialApp,
  StoredSocialToken,
} from './ports.js';

/** A user may hold any number of WebAuthn keys, but one authenticator of every other type. */
const MANY_PER_USER: AuthenticatorType = 'webauthn';

const userAndType = (userId: number, type: string): string | undefined => (type === MANY_PER_USER ? undefined : `${userId}:${type}`);

/**
 * An authenticator is the same when it is the same user's of the same type. A user has one TOTP
 * secret and one set of recovery codes; a WebAuthn credential belongs to one authenticator only,
 * since it is what a passkey sign-in finds the user by.
 */
export const authenticatorConflicts: KindConflicts<ImportedAuthenticator, StoredAuthenticator, AuthenticatorImportTable> = {
  idOf: ({ authenticator }) => authenticator.id,
  storedIdOf: (stored) => stored.id,
  identity: ({ authenticator }) => `${authenticator.userId}:${authenticator.type}`,
  storedIdentity: (stored) => `${stored.userId}:${stored.type}`,
  readById: (table, rows) => table.withIds(distinct(rows.map((row) => row.authenticator.id))),
  takenReason: (id) => `id ${id} is another authenticator's in Latchkey`,
  unique: [
    {
      of: ({ authenticator }) => userAndType(authenticator.userId, authenticator.type),
      heldBy: (stored) => userAndType(stored.userId, stored.type),
      read: (table, rows) => table.ofUsersExceptType(distinct(rows.map((row) => row.authenticator.userId)), MANY_PER_USER),
      reason: (holder) => `the user has an authenticator of this type in Latchkey already (id ${holder})`,
    },
    {
      of: ({ authenticator }) => authenticator.credentialId ?? undefined,
      heldBy: (stored) => stored.credentialId ?? undefined,
      read: (table, rows) => table.withCredentialIds(definedValues(rows.map((row) => row.authenticator.credentialId ?? undefined))),
      reason: (holder) => `authenticator ${holder} has the same WebAuthn credential`,
    },
  ],
};

const providerApp = (app: { provider: string; providerId: string }): string => `${app.provider}:${app.providerId}`;

/** Latchkey has one app per provider and provider_id: the one it has is kept. */
export const socialAppConflicts: KindConflicts<SocialApp, StoredSocialApp, SocialAppImportTable> = {
  idOf: (app) => app.id,
  storedIdOf: (stored) => stored.id,
  identity: providerApp,
  storedIdentity: providerApp,
  readById: (table, rows) => table.withIds(distinct(rows.map((app) => app.id))),
  takenReason: (id) => `id ${id} is another social app's in Latchkey`,
  unique: [
    {
      of: providerApp,
      heldBy: providerApp,
      read: (table, rows) => table.withProviders(definedValues(rows.map((app) => app.provider))),
      reason: (holder) => `Latchkey has an app for this provider already (id ${holder})`,
    },
  ],
};

const providerAccount = (account: { provider: string; uid: string }): string => `${account.provider}:${account.uid}`;

/**
 * A provider's account (its provider and uid) signs in one Latchkey user: an imported row for a
 * provider account Latchkey has already is skipped, so it keeps signing in the user it does now.
 */
export const socialAccountConflicts: KindConflicts<SocialAccount, StoredSocialAccount, SocialAccountImportTable> = {
  idOf: (account) => account.id,
  storedIdOf: (stored) => stored.id,
  identity: providerAccount,
  storedIdentity: providerAccount,
  readById: (table, rows) => table.withIds(distinct(rows.map((account) => account.id))),
  takenReason: (id) => `id ${id} is another social account's in Latchkey`,
  unique: [
    {
      of: providerAccount,
      heldBy: providerAccount,
      read: (table, rows) => table.withUids(definedValues(rows.map((account) => account.uid))),
      reason: (holder) => `social account ${holder} in Latchkey is the same provider account`,
    },
  ],
};

const accountAndApp = (token: { accountId: number; appId: number | null }): string => `${token.accountId}:${token.appId ?? ''}`;

/** A social account holds one token per app (and one without an app). */
export const socialTokenConflicts: KindConflicts<SocialToken, StoredSocialToken, SocialTokenImportTable> = {
  idOf: (token) => token.id,
  storedIdOf: (stored) => stored.id,
  identity: (token) => String(token.accountId),
  storedIdentity: (stored) => String(stored.accountId),
  readById: (table, rows) => table.withIds(distinct(rows.map((token) => token.id))),
  takenReason: (id) => `id ${id} is another social token's in Latchkey`,
  unique: [
    {
      of: accountAndApp,
      heldBy: accountAndApp,
      read: (table, rows) => table.ofAccounts(distinct(rows.map((token) => token.accountId))),
      reason: (holder) => `the social account has a token for this app in Latchkey already (id ${holder})`,
    },
  ],
};
