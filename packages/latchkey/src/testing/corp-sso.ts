/**
 * "Corp SSO", the OpenID Connect app the page tests sign in through: a real provider
 * (testing/oidc-provider.ts) that knows the test site's callback, the app entry that points a
 * Latchkey at it, and the trip a browser makes through it.
 */
import type { SettingValues } from '../config/settings.js';
import type { TestLatchkey } from './latchkey.js';
import { startTestOidcProvider, type TestOidcProvider } from './oidc-provider.js';
import type { PageClient } from './pages.js';

export const CORP_LOGIN = '/accounts/oidc/corp/login/';
const CORP_CALLBACK = 'http://testserver/accounts/oidc/corp/login/callback/';
const CLIENT = { client_id: 'latchkey', client_secret: 'provider-secret' };

export function startCorpProvider(accounts: Parameters<typeof startTestOidcProvider>[0]['accounts']): Promise<TestOidcProvider> {
  return startTestOidcProvider({ clients: [{ ...CLIENT, redirect_uris: [CORP_CALLBACK] }], accounts });
}

/** SOCIALACCOUNT_PROVIDERS with the one Corp SSO app. */
export function corpProviders(provider: TestOidcProvider): SettingValues['SOCIALACCOUNT_PROVIDERS'] {
  const corp = { provider_id: 'corp', name: 'Corp SSO', client_id: CLIENT.client_id, secret: CLIENT.client_secret, settings: { server_url: provider.issuer } };
  return { openid_connect: { APPS: [corp] } };
}

/** The button (a POST with `fields`), the provider's consent as `login`, and the callback: its URL and the site's answer. */
export async function throughCorp(provider: TestOidcProvider, browser: PageClient, login: string, fields: Record<string, string> = {}) {
  const started = await browser.post(CORP_LOGIN, fields);
  if (started.statusCode !== 302) throw new Error(`The sign-in did not start: ${started.statusCode}`);
  const callback = await provider.followAuthorization(started.headers.location!, { as: { login } });
  return { callback, response: await browser.get(callback.pathname + callback.search) };
}

/** Who the browser's session belongs to: a user id, null while a login waits, undefined without a session. */
export async function sessionUserOf(latchkey: TestLatchkey, browser: PageClient): Promise<number | null | undefined> {
  return (await latchkey.deps.sessions.load(browser.cookies.get('sessionid')))?.userId;
}
