import type { AuthenticatorType } from '../../mfa/model.js';
import type { AuthenticatorImportTable, SocialAccountImportTable, SocialAppImportTable, SocialTokenImportTable, StoredAuthenticator } from '../../django-import/ports.js';
import { inChunks, type Db } from './django-import-chunks.js';
import { toInstantColumn } from './schema.js';

// The import's reads and writes of MFA authenticators and social sign-in's apps, accounts and
// tokens. Each read is one query for a whole batch; what counts as a conflict is decided in
// django-import/mfa-social-conflicts.ts.

export function authenticatorImportTable(db: Db): AuthenticatorImportTable {
  const select = () => db.selectFrom('latchkey_authenticators').select(['id', 'user_id', 'type', 'credential_id']);
  const asStored = (row: { id: number; user_id: number; type: AuthenticatorType; credential_id: string | null }): StoredAuthenticator => ({ id: row.id, userId: row.user_id, type: row.type, credentialId: row.credential_id });
  return {
    withIds: async (ids) => (await select().where('id', 'in', ids).execute()).map(asStored),
    ofUsersExceptType: async (userIds, type) => (await select().where('user_id', 'in', userIds).where('type', '!=', type).execute()).map(asStored),
    withCredentialIds: async (credentialIds) => (await select().where('credential_id', 'in', credentialIds).execute()).map(asStored),
    insert: async (rows) => {
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
}

export function socialAppImportTable(db: Db): SocialAppImportTable {
  const select = () => db.selectFrom('latchkey_social_apps').select(['id', 'provider', 'provider_id']);
  const asStored = (row: { id: number; provider: string; provider_id: string }) => ({ id: row.id, provider: row.provider, providerId: row.provider_id });
  return {
    withIds: async (ids) => (await select().where('id', 'in', ids).execute()).map(asStored),
    withProviders: async (providers) => (await select().where('provider', 'in', providers).execute()).map(asStored),
    insert: (rows) =>
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
}

export function socialAccountImportTable(db: Db): SocialAccountImportTable {
  const select = () => db.selectFrom('latchkey_social_accounts').select(['id', 'provider', 'uid']);
  return {
    withIds: (ids) => select().where('id', 'in', ids).execute(),
    withUids: (uids) => select().where('uid', 'in', uids).execute(),
    insert: (rows) =>
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
}

export function socialTokenImportTable(db: Db): SocialTokenImportTable {
  const select = () => db.selectFrom('latchkey_social_tokens').select(['id', 'account_id', 'app_id']);
  const asStored = (row: { id: number; account_id: number; app_id: number | null }) => ({ id: row.id, accountId: row.account_id, appId: row.app_id });
  return {
    withIds: async (ids) => (await select().where('id', 'in', ids).execute()).map(asStored),
    ofAccounts: async (accountIds) => (await select().where('account_id', 'in', accountIds).execute()).map(asStored),
    insert: (rows) =>
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
}
