/**
 * A provider's tokens for a social account (SOCIALACCOUNT_STORE_TOKENS): kept encrypted, each bound
 * to its account, app and kind, so that a value copied onto another row does not open there.
 */
import { decryptSecret, encryptSecret } from '../core/encryption.js';
import type { LatchkeyDeps } from '../deps.js';
import type { Repositories } from '../store.js';
import type { ProviderApp } from './apps.js';
import type { SocialToken } from './model.js';
import type { ProviderTokens } from './providers/provider.js';

const TOKEN_PURPOSE = 'social-token';

function binding(accountId: number, appId: number | null, kind: 'access' | 'refresh'): string {
  return `social-token:${accountId}:${appId ?? 'settings'}:${kind}`;
}

function seal(secretKey: string, value: string, where: string): string {
  return encryptSecret(secretKey, TOKEN_PURPOSE, Buffer.from(value, 'utf8'), where);
}

/**
 * Stores what a provider gave at a login or a connect, when the project keeps tokens; otherwise
 * nothing (allauth's default). A token without a refresh token keeps the stored refresh token.
 */
export async function storeProviderTokens(
  deps: Pick<LatchkeyDeps, 'settings'>,
  repositories: Pick<Repositories, 'socialTokens'>,
  accountId: number,
  app: Pick<ProviderApp, 'databaseId'>,
  tokens: ProviderTokens | undefined,
): Promise<void> {
  if (!deps.settings.SOCIALACCOUNT_STORE_TOKENS || !tokens || tokens.accessToken === '') return;
  const appId = app.databaseId ?? null;
  await repositories.socialTokens.save({
    accountId,
    appId,
    ...sealProviderTokens(deps.settings.SECRET_KEY, accountId, appId, tokens.accessToken, tokens.refreshToken ?? ''),
    expiresAt: tokens.expiresAt ?? null,
  });
}

/** A provider's access and refresh tokens as a row keeps them (also for tokens `manage import-django` brings); '' stays ''. */
export function sealProviderTokens(secretKey: string, accountId: number, appId: number | null, accessToken: string, refreshToken: string): Pick<SocialToken, 'sealedToken' | 'sealedTokenSecret'> {
  return {
    sealedToken: seal(secretKey, accessToken, binding(accountId, appId, 'access')),
    sealedTokenSecret: refreshToken ? seal(secretKey, refreshToken, binding(accountId, appId, 'refresh')) : '',
  };
}

/**
 * A stored token in clear, for project code that calls the provider's API on the user's behalf.
 * Undefined when it no longer opens (SECRET_KEY changed, or the row was tampered with).
 */
export function openProviderToken(deps: Pick<LatchkeyDeps, 'settings'>, token: SocialToken): { accessToken: string; refreshToken: string } | undefined {
  const secretKey = deps.settings.SECRET_KEY;
  const access = decryptSecret(secretKey, TOKEN_PURPOSE, token.sealedToken, binding(token.accountId, token.appId, 'access'));
  if (!access) return undefined;
  if (token.sealedTokenSecret === '') return { accessToken: Buffer.from(access).toString('utf8'), refreshToken: '' };
  const refresh = decryptSecret(secretKey, TOKEN_PURPOSE, token.sealedTokenSecret, binding(token.accountId, token.appId, 'refresh'));
  if (!refresh) return undefined;
  return { accessToken: Buffer.from(access).toString('utf8'), refreshToken: Buffer.from(refresh).toString('utf8') };
}
