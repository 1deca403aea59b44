/**
 * Signing in with a third-party account (an OpenID Connect provider), as allauth.headless's
 * browser clients do. The API cannot send the browser to the provider in answer to a fetch (a
 * redirect would be followed out of sight), so each button is a real form that posts to
 * `auth/provider/redirect` and leaves the app: the API answers with a redirect to the provider,
 * and the provider's callback sends the browser back to the app's `#/provider/callback/...` route,
 * with `?error=<code>&error_process=<login|connect>` before the fragment when it failed. The app
 * then reads the session, as after any sign-in (app.js).
 */
/* global window */
import { API_BASE, csrfToken } from './api.js';
import { h } from './dom.js';

/** The app's route a provider sends the browser back to, for `process` ('login' or 'connect'). */
export const CALLBACK_ROUTE = '/provider/callback';

/** The providers the site offers to a browser (config's `socialaccount.providers`; none when none is configured). */
export function redirectProviders(app) {
  const providers = app.state.config?.socialaccount?.providers;
  if (!Array.isArray(providers)) return [];
  return providers.filter((provider) => typeof provider?.id === 'string' && Array.isArray(provider.flows) && provider.flows.includes('provider_redirect'));
}

/**
 * Where the provider's callback sends the browser: this page's own path and a route in the
 * fragment, a same-site path as `callback_url` must be (an absolute URL is accepted only at this
 * site's or an allowed front end's origin). The API adds `?error=` before the fragment, where the
 * page can read it. A connect names its provider, to send the request again after "Confirm it is you".
 */
function callbackUrl(process, provider) {
  const route = process === 'connect' ? `${CALLBACK_ROUTE}/connect/${encodeURIComponent(provider.id)}` : `${CALLBACK_ROUTE}/login`;
  return `${window.location.pathname}#${route}`;
}

/**
 * A button that sends the browser to `provider`: a form of hidden fields posted as a page
 * navigation. The CSRF cookie's value goes in `csrfmiddlewaretoken` as the form is sent (the API
 * checks it as it checks X-CSRFToken), read then because a login replaces it.
 *
 * @param {{ id: string, name: string }} provider
 * @param {'login' | 'connect'} process
 * @param {string} label
 */
export function providerForm(provider, process, label) {
  const token = h('input', { type: 'hidden', name: 'csrfmiddlewaretoken', value: '' });
  const element = h(
    'form',
    { method: 'post', action: `${API_BASE}/auth/provider/redirect`, class: 'provider-form' },
    h('input', { type: 'hidden', name: 'provider', value: provider.id }),
    h('input', { type: 'hidden', name: 'process', value: process }),
    h('input', { type: 'hidden', name: 'callback_url', value: callbackUrl(process, provider) }),
    token,
    h('button', { type: 'submit', class: 'button button-secondary' }, label),
  );
  element.addEventListener('submit', () => {
    token.value = csrfToken();
  });
  return element;
}

/** The login and signup views' buttons, one per provider (nothing when none is configured). */
export function providerButtons(app, verb) {
  const providers = redirectProviders(app);
  if (providers.length === 0) return null;
  return h(
    'section',
    { class: 'section', 'aria-labelledby': 'spa-providers-heading' },
    h('h2', { id: 'spa-providers-heading' }, 'Or use a third-party account'),
    h('div', { class: 'actions', id: 'spa-providers' }, providers.map((provider) => providerForm(provider, 'login', `${verb} with ${provider.name}`))),
  );
}

/**
 * The `?error=&error_process=` the provider's callback (or a refused start) put before the
 * fragment, taken out of the address bar so that a reload or a bookmark does not show it again.
 */
export function takeProviderError() {
  const query = new URLSearchParams(window.location.search);
  const error = query.get('error');
  if (error === null) return undefined;
  window.history.replaceState(window.history.state, '', `${window.location.pathname}${window.location.hash}`);
  return { error, process: query.get('error_process') === 'connect' ? 'connect' : 'login' };
}

/** What a person reads for an error code of the provider's callback (allauth.headless's codes). */
export function providerErrorMessage({ error, process }) {
  const connecting = process === 'connect';
  switch (error) {
    case 'cancelled':
      return connecting ? 'You cancelled connecting the third-party account.' : 'You cancelled signing in with the third-party account.';
    case 'signup_closed':
      return 'Sign up is closed on this site.';
    case 'permission_denied':
      return connecting ? 'Sign in to your account first, then connect the third-party account.' : 'You may not sign in with that third-party account.';
    case 'reauthentication_required':
      return 'Connecting a third-party account needs you to confirm who you are first.';
    case 'connected_other':
      return 'The third-party account is already connected to a different account.';
    default:
      return connecting
        ? 'The third-party account could not be connected. Please try again.'
        : 'An error occurred while attempting to sign in via your third-party account. Please try again, or sign in another way.';
  }
}
