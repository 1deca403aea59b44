import type { RedirectProvider, SignInProvider } from '../socialaccount/providers/provider.js';

/** The provider, known to be of the OAuth 2.0 kinds: a test that calls its callback or token methods fails clearly otherwise. */
export function asRedirectProvider(provider: SignInProvider): RedirectProvider {
  if (provider.protocol !== 'oauth2') throw new Error(`Provider ${provider.id} is a SAML app, not an OAuth 2.0 one.`);
  return provider;
}
