/**
 * Signing in with a token the client got from the provider itself (allauth.headless's
 * auth/provider/token): a mobile app runs the provider's own sign-in on the device and hands over
 * the ID token (or, for Facebook, the access token) it was given. The token is checked against
 * the app it names, found by provider and client id (a provider may have an app per mobile
 * client). An ID token: its signature by the provider's keys, its issuer, its audience (the client
 * id), its expiry and, when it names an authorized party (`azp`), that this is the client id too,
 * so that a token issued to another client of the same provider, with this client merely among its
 * audiences, is refused. An access token: by the provider's own API, that it is valid and was
 * issued to this client. The person it names then goes through the same login (or connect) as a
 * provider's callback.
 */
import { requireRecentAuthentication } from '../../account/flows/reauthenticate.js';
import type { ClientInfo } from '../../core/client.js';
import { isLatchkeyError, LatchkeyError } from '../../core/errors.js';
import type { LatchkeyDeps } from '../../deps.js';
import type { LoginContext } from '../../login/stages.js';
import type { ConfiguredProvider } from '../directory.js';
import { ProviderError, type ProviderProfile, type ProviderTokens } from '../providers/provider.js';
import { connectSocialAccount, type ConnectResult } from './connect.js';
import type { SignedInRequester } from './connections.js';
import { finishProviderLogin } from './provider-login.js';
import type { ProviderLoginResult } from './results.js';
import { msgid } from '../../core/i18n/message.js';

/** What the client sent: the provider's id and the token object (`{client_id, id_token?, access_token?}`), unchecked. */
export interface ProviderTokenInput {
  provider: unknown;
  token: unknown;
}

/** allauth.headless's messages, by its codes (the `reason` of the LatchkeyError thrown). */
export const PROVIDER_TOKEN_MESSAGES = {
  unknown_provider: msgid('Unknown provider.'),
  invalid_token: msgid('Invalid token.'),
  client_id_required: msgid('Client ID required.'),
  token_authentication_not_supported: msgid('Provider does not support token authentication.'),
  token_required: msgid('Token required.'),
} as const;

type Refusal = keyof typeof PROVIDER_TOKEN_MESSAGES;

function refused(reason: Refusal, param: 'provider' | 'token', cause?: unknown): LatchkeyError {
  return new LatchkeyError('invalid_input', PROVIDER_TOKEN_MESSAGES[reason], { param, reason, ...(cause === undefined ? {} : { cause }) });
}

/** Whether any app answers to `id` (several that cannot be told apart still count: the client id will). */
async function providerExists(deps: Pick<LatchkeyDeps, 'providerDirectory'>, id: string): Promise<boolean> {
  try {
    return (await deps.providerDirectory.provider(id)) !== undefined;
  } catch (error) {
    if (isLatchkeyError(error, 'configuration_invalid')) return true;
    throw error;
  }
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' && !value.includes('\u0000') ? value : undefined;
}

/**
 * The app the token names and the person it vouches for. Throws LatchkeyError('invalid_input')
 * whose `reason` is allauth's code: 'unknown_provider' (param provider), 'invalid_token' (not an
 * object, no app with that client id, or a token that does not verify: the ProviderError is its
 * `cause`, for the log), 'client_id_required', 'token_authentication_not_supported' (param
 * provider), 'token_required' (no ID token: only ID tokens can be verified without the provider's
 * help).
 */
export async function verifyProviderToken(
  deps: Pick<LatchkeyDeps, 'providerDirectory'>,
  input: ProviderTokenInput,
): Promise<{ configured: ConfiguredProvider; profile: ProviderProfile; tokens: ProviderTokens | undefined }> {
  const providerId = text(input.provider);
  if (providerId === undefined || !(await providerExists(deps, providerId))) throw refused('unknown_provider', 'provider');
  const token = input.token;
  if (token === null || typeof token !== 'object' || Array.isArray(token)) throw refused('invalid_token', 'token');
  const fields = token as Record<string, unknown>;
  const clientId = text(fields.client_id);
  if (clientId === undefined) throw refused('client_id_required', 'token');
  const configured = await deps.providerDirectory.provider(providerId, clientId);
  if (!configured) throw refused('invalid_token', 'token');
  const { provider } = configured;
  if (provider.protocol !== 'oauth2' || (!provider.verifyIdToken && !provider.verifyAccessToken)) throw refused('token_authentication_not_supported', 'provider');
  const idToken = text(fields.id_token);
  const accessToken = fields.access_token === undefined ? undefined : text(fields.access_token);
  if (fields.access_token !== undefined && accessToken === undefined) throw refused('token_required', 'token');
  // An access token is checked with the provider (Facebook's debug_token) when the provider can;
  // otherwise only an ID token can be checked, by its signature, and an access token merely rides along.
  const byAccessToken = accessToken !== undefined && provider.verifyAccessToken !== undefined;
  if (!byAccessToken && (idToken === undefined || !provider.verifyIdToken)) throw refused('token_required', 'token');
  let profile: ProviderProfile;
  try {
    profile = byAccessToken ? await provider.verifyAccessToken!(accessToken) : await provider.verifyIdToken!(idToken!);
  } catch (error) {
    if (error instanceof ProviderError) throw refused('invalid_token', 'token', error);
    throw error;
  }
  const claims = profile.extraData.id_token;
  const azp = claims !== null && typeof claims === 'object' ? (claims as Record<string, unknown>).azp : undefined;
  if (azp !== undefined && azp !== configured.app.clientId) {
    throw refused('invalid_token', 'token', new ProviderError('failed', `${provider.id}: the ID token was issued to ${JSON.stringify(azp)} (azp), not to ${configured.app.clientId}`));
  }
  return { configured, profile, tokens: accessToken === undefined ? undefined : { accessToken, idToken } };
}

/** A token login: the same pipeline as a callback's (an existing account's stages, a signup, the signup form). */
export async function loginWithProviderToken(deps: LatchkeyDeps, input: ProviderTokenInput, context: LoginContext): Promise<ProviderLoginResult> {
  // A login like any other: counted against the same per-address limit before any work (a token's
  // check may fetch the provider's keys).
  await deps.rateLimits.enforce('login', { ip: context.client.ip });
  const { configured, profile, tokens } = await verifyProviderToken(deps, input);
  return finishProviderLogin(deps, configured, { profile, ...(tokens ? { tokens } : {}) }, '', context);
}

/**
 * A token connect for the signed-in requester: throws as connectSocialAccount (no recent proof of
 * identity; the provider account is someone else's), and as verifyProviderToken.
 */
export async function connectWithProviderToken(deps: LatchkeyDeps, requester: SignedInRequester, input: ProviderTokenInput, client: ClientInfo): Promise<ConnectResult> {
  // Refused before the token is looked at: checking it may fetch the provider's keys.
  requireRecentAuthentication(deps, requester.lastAuthenticatedAt);
  const { configured, profile, tokens } = await verifyProviderToken(deps, input);
  return connectSocialAccount(deps, requester, configured, { profile, ...(tokens ? { tokens } : {}) }, client);
}
