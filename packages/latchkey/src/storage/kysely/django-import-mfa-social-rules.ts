import type { ImportedAuthenticator } from '../../django-import/ports.js';
import type { SocialAccount, SocialApp, SocialToken } from '../../socialaccount/model.js';
import { defined, ids, inChunks, type TableRules } from './django-import-rows.js';
import { toInstantColumn } from './schema.js';

// The import's rules for MFA authenticators and social sign-in's apps, accounts and tokens.

export const authenticatorRules: TableRules<ImportedAuthenticator> = {
  idOf: ({ authenticator }) => authenticator.id,
  identity: ({ authenticator }) => `${authenticator.userId}:${authenticator.type}`,
  existing: async (db, rows) => {
    const found = await db.selectFrom('latchkey_authenticators').select(['id', 'user_id', 'type']).where('id', 'in', ids(rows, (row) => row.authenticator.id)).execute();
    return new Map(found.map((row) => [row.id, `${row.user_id}:${row.type}`]));
  },
  takenReason: (id) => `id ${id} is another authenticator's in Latchkey`,
  unique: [
    {
      // One of each type per user, but any number of WebAuthn keys.
      of: ({ authenticator }) => (authenticator.type === 'webauthn' ? undefined : `${authenticator.userId}:${authenticator.type}`),
      holders: async (db, rows) => {
        const found = await db.selectFrom('latchkey_authenticators').select(['id', 'user_id', 'type']).where('user_id', 'in', ids(rows, (row) => row.authenticator.userId)).where('type', '!=', 'webauthn').execute();
        return new Map(found.map((row) => [`${row.user_id}:${row.type}`, row.id]));
      },
      reason: (holder) => `the user has an authenticator of this type in Latchkey already (id ${holder})`,
    },
    {
      of: ({ authenticator }) => authenticator.credentialId ?? undefined,
      holders: async (db, rows) => {
        const credentials = defined(rows.map((row) => row.authenticator.credentialId ?? undefined));
        const found = await db.selectFrom('latchkey_authenticators').select(['id', 'credential_id']).where('credential_id', 'in', credentials).execute();
        return new Map(found.map((row) => [String(row.credential_id), row.id]));
      },
      reason: (holder) => `authenticator ${holder} has the same WebAuthn credential`,
    },
  ],
  insert: async (db, rows) => {
    await inChunks(rows, (chunk) =>
      db
        .insertInto('latchkey_authenticators')
        .values(
          chunk.map(({ authenticator }) => ({
            id: authenticator.id,
            user_id: authenticator.userId,
            type: authenticator.type,
            data: JSON.stringify(authenticator.data),
            credential_id: authenticator.credentialId,
            created_at: toInstantColumn(authenticator.createdAt),
            last_used_at: authenticator.lastUsedAt ? toInstantColumn(authenticator.lastUsedAt) : null,
          })),
        )
        .execute(),
    );
    const uses = rows.flatMap(({ authenticator, usedRecoveryCodes }) =>
      usedRecoveryCodes.map((index) => ({ authenticator_id: authenticator.id, code_index: index, used_at: toInstantColumn(authenticator.lastUsedAt ?? authenticator.createdAt) })),
    );
    await inChunks(uses, (chunk) => db.insertInto('latchkey_recovery_code_uses').values(chunk).execute());
  },
};

export const socialAppRules: TableRules<SocialApp> = {
  idOf: (app) => app.id,
  identity: (app) => `${app.provider}:${app.providerId}`,
  existing: async (db, rows) => {
    const found = await db.selectFrom('latchkey_social_apps').select(['id', 'provider', 'provider_id']).where('id', 'in', ids(rows, (app) => app.id)).execute();
    return new Map(found.map((row) => [row.id, `${row.provider}:${row.provider_id}`]));
  },
  takenReason: (id) => `id ${id} is another social app's in Latchkey`,
  unique: [
    {
      of: (app) => `${app.provider}:${app.providerId}`,
      holders: async (db, rows) => {
        const found = await db.selectFrom('latchkey_social_apps').select(['id', 'provider', 'provider_id']).where('provider', 'in', defined(rows.map((app) => app.provider))).execute();
        return new Map(found.map((row) => [`${row.provider}:${row.provider_id}`, row.id]));
      },
      reason: (holder) => `Latchkey has an app for this provider already (id ${holder})`,
    },
  ],
  insert: (db, rows) =>
    inChunks(rows, (chunk) =>
      db
        .insertInto('latchkey_social_apps')
        .values(
          chunk.map((app) => ({
            id: app.id,
            provider: app.provider,
            provider_id: app.providerId,
            name: app.name,
            client_id: app.clientId,
            sealed_secret: app.sealedSecret,
            key: app.key,
            settings: JSON.stringify(app.settings),
          })),
        )
        .execute(),
    ),
};

export const socialAccountRules: TableRules<SocialAccount> = {
  idOf: (account) => account.id,
  identity: (account) => `${account.provider}:${account.uid}`,
  existing: async (db, rows) => {
    const found = await db.selectFrom('latchkey_social_accounts').select(['id', 'provider', 'uid']).where('id', 'in', ids(rows, (account) => account.id)).execute();
    return new Map(found.map((row) => [row.id, `${row.provider}:${row.uid}`]));
  },
  takenReason: (id) => `id ${id} is another social account's in Latchkey`,
  unique: [
    {
      of: (account) => `${account.provider}:${account.uid}`,
      holders: async (db, rows) => {
        const found = await db.selectFrom('latchkey_social_accounts').select(['id', 'provider', 'uid']).where('uid', 'in', defined(rows.map((account) => account.uid))).execute();
        return new Map(found.map((row) => [`${row.provider}:${row.uid}`, row.id]));
      },
      reason: (holder) => `social account ${holder} in Latchkey is the same provider account`,
    },
  ],
  insert: (db, rows) =>
    inChunks(rows, (chunk) =>
      db
        .insertInto('latchkey_social_accounts')
        .values(
          chunk.map((account) => ({
            id: account.id,
            user_id: account.userId,
            provider: account.provider,
            uid: account.uid,
            extra_data: JSON.stringify(account.extraData),
            date_joined: toInstantColumn(account.dateJoined),
            last_login: toInstantColumn(account.lastLogin),
          })),
        )
        .execute(),
    ),
};

export const socialTokenRules: TableRules<SocialToken> = {
  idOf: (token) => token.id,
  identity: (token) => String(token.accountId),
  existing: async (db, rows) => {
    const found = await db.selectFrom('latchkey_social_tokens').select(['id', 'account_id']).where('id', 'in', ids(rows, (token) => token.id)).execute();
    return new Map(found.map((row) => [row.id, String(row.account_id)]));
  },
  takenReason: (id) => `id ${id} is another social token's in Latchkey`,
  unique: [
    {
      of: (token) => `${token.accountId}:${token.appId ?? ''}`,
      holders: async (db, rows) => {
        const found = await db.selectFrom('latchkey_social_tokens').select(['id', 'account_id', 'app_id']).where('account_id', 'in', ids(rows, (token) => token.accountId)).execute();
        return new Map(found.map((row) => [`${row.account_id}:${row.app_id ?? ''}`, row.id]));
      },
      reason: (holder) => `the social account has a token for this app in Latchkey already (id ${holder})`,
    },
  ],
  insert: (db, rows) =>
    inChunks(rows, (chunk) =>
      db
        .insertInto('latchkey_social_tokens')
        .values(
          chunk.map((token) => ({
            id: token.id,
            account_id: token.accountId,
            app_id: token.appId,
            sealed_token: token.sealedToken,
            sealed_token_secret: token.sealedTokenSecret,
            expires_at: token.expiresAt ? toInstantColumn(token.expiresAt) : null,
          })),
        )
        .execute(),
    ),
};
