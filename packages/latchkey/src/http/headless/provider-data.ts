import { isLatchkeyError } from '../../core/errors.js';
import type { ProviderApp } from '../../socialaccount/apps.js';
import type { ConfiguredProvider } from '../../socialaccount/directory.js';
import type { SocialAccount } from '../../socialaccount/model.js';
import type { SignInProvider } from '../../socialaccount/providers/provider.js';
import type { HttpContext } from '../kit/context.js';

/** How a client may sign in with a provider: through the browser's redirect, or with a token it already holds. */
export type ProviderFlow = 'provider_redirect' | 'provider_token';

/** A provider as the headless API shows it (allauth's Provider schema). */
export interface ProviderData {
  id: string;
  name: string;
  /** Absent only for an account whose app has since been removed. */
  client_id?: string;
  openid_configuration_url?: string;
  flows: ProviderFlow[];
}

/** Where an OpenID Connect app's discovery document is: server_url + '/.well-known/openid-configuration', unless it names the document itself. */
function openIdConfigurationUrl(app: ProviderApp): string | undefined {
  const serverUrl = app.settings.server_url;
  if (typeof serverUrl !== 'string' || serverUrl === '') return undefined;
  return serverUrl.includes('/.well-known/') ? serverUrl : `${serverUrl.replace(/\/+$/, '')}/.well-known/openid-configuration`;
}

/** Whether a client may hand the provider's token over: it can verify an ID token itself (OpenID Connect) or check an access token with the provider (Facebook). */
export function takesProviderTokens(provider: SignInProvider): boolean {
  return provider.protocol === 'oauth2' && (provider.verifyIdToken !== undefined || provider.verifyAccessToken !== undefined);
}

/**
 * The providers offered (none configured: none), by name, each with the flows it supports: every
 * provider signs in by redirect; only one that can check a token the client brings takes a token.
 */
export async function offeredProviders(ctx: HttpContext): Promise<ProviderData[]> {
  return (await ctx.deps.providerDirectory.offered()).map(({ app, provider }) => providerData(app, takesProviderTokens(provider)));
}

/**
 * Two visible apps with one id are a configuration error that the sign-in refuses (apps.ts findApp);
 * describing a stored account's provider leaves that provider out rather than fail.
 */
async function configuredOrNone(ctx: HttpContext, id: string): Promise<ConfiguredProvider | undefined> {
  try {
    return await ctx.deps.providerDirectory.provider(id);
  } catch (error) {
    if (isLatchkeyError(error, 'configuration_invalid')) return undefined;
    throw error;
  }
}

export function providerData(app: ProviderApp, takesTokens: boolean): ProviderData {
  const discovery = app.provider === 'openid_connect' ? openIdConfigurationUrl(app) : undefined;
  return {
    id: app.id,
    name: app.name,
    client_id: app.clientId,
    ...(discovery === undefined ? {} : { openid_configuration_url: discovery }),
    flows: takesTokens ? ['provider_redirect', 'provider_token'] : ['provider_redirect'],
  };
}

/** The provider a stored account or a pending signup belongs to, or undefined when its app is gone. */
export async function providerDataOf(ctx: HttpContext, providerId: string): Promise<ProviderData | undefined> {
  const configured = await configuredOrNone(ctx, providerId);
  return configured && providerData(configured.app, takesProviderTokens(configured.provider));
}

/** What to call a provider account: the name the provider gave (as allauth's OpenID Connect account), else the provider's name. */
export function accountDisplay(extraData: Record<string, unknown>, providerName: string): string {
  for (const source of [extraData.userinfo, extraData.id_token, extraData]) {
    const name = source !== null && typeof source === 'object' ? (source as Record<string, unknown>).name : undefined;
    if (typeof name === 'string' && name.trim() !== '') return name.trim();
  }
  return providerName;
}

/** A user's provider account (allauth's ProviderAccount): its uid, a name to show, and its provider. */
export function providerAccountData(account: Pick<SocialAccount, 'uid' | 'extraData'>, provider: ProviderData): { uid: string; display: string; provider: ProviderData } {
  return { uid: account.uid, display: accountDisplay(account.extraData, provider.name), provider };
}
