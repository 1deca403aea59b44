/**
 * The example site's single-page app: a plain-JavaScript client of Latchkey's headless API
 * (allauth's browser client contract), served from /spa/ with no build step and no framework.
 *
 * It routes as allauth's own clients do, on the API's answers rather than on its own guesses:
 * a 200 with a user is "signed in"; a 401 lists the flows, and the one marked `is_pending` is the
 * step a login waits at (confirm the email address, enter a mailed code or a second factor, make
 * the passkey of a passkey signup); a 401 whose `meta` says the
 * session is authenticated asks the person to prove again who they are, after which the action
 * is sent again. A sign-in through a third-party provider leaves the app and comes back to
 * `#/provider/callback/...` (provider-views.js), where the session is read as after any sign-in.
 * Views live in auth-views.js, code-views.js (mailed codes), passkey-views.js (signing in and up
 * with a key), account-views.js, key-views.js (managing keys) and provider-views.js; this file
 * holds the state, the router and the page frame.
 */
/* global document, window */
import { call, isAuthenticated, needsReauthentication, pendingFlow } from './api.js';
import { accountView, providersView, totpView } from './account-views.js';
import { isOpenForSignup, loginView, mfaAuthenticateView, providerSignupView, reauthenticateView, signupView, verifyEmailView, verifyKeyView } from './auth-views.js';
import { confirmLoginCodeView, loginByCodeEnabled, requestLoginCodeView, verificationByCodeEnabled, verifyEmailCodeView } from './code-views.js';
import { actionButton, h, messageList } from './dom.js';
import { keysView } from './key-views.js';
import { passkeyCreateView, passkeySignupView, securityKeysSupported } from './passkey-views.js';
import { CALLBACK_ROUTE, providerErrorMessage, providerForm, redirectProviders, takeProviderError } from './provider-views.js';

const SITE_NAME = '%%project_name%%';
const main = /** @type {HTMLElement} */ (document.getElementById('main'));
const nav = /** @type {HTMLElement} */ (document.getElementById('nav'));

/**
 * What the app knows: the server's configuration, the last answer about the session (a 200 with
 * the user, or a 401 with the flows), the messages to show on the next view, the error a
 * provider's callback came back with (`?error=`), until the callback route has read it, and
 * whether the site takes signups with a passkey, once asked (passkey-views.js).
 */
const state = {
  /** @type {any} */ config: undefined,
  /** @type {any} */ auth: { status: 401, data: { flows: [] }, meta: { is_authenticated: false } },
  /** @type {string[]} */ messages: [],
  /** @type {string[]} */ errors: [],
  /** @type {{ error: string, process: 'login' | 'connect' } | undefined} */ providerError: undefined,
  /** @type {Promise<boolean> | undefined} */ passkeySignup: undefined,
};

/** Each render takes a ticket; a view whose data arrives after a newer render began is dropped. */
let renders = 0;

function currentPath() {
  return window.location.hash.replace(/^#/, '') || '/';
}

/**
 * Shows `path`. Redirects replace the history entry, so that Back never returns to a step that
 * is over, and a confirmation key leaves the address bar (and history) once it has been used.
 */
function go(path) {
  if (currentPath() === path) return render();
  window.location.replace(`#${path}`);
  return Promise.resolve();
}

/** Where a session in this state belongs. */
function homeFor(auth) {
  if (isAuthenticated(auth)) return '/account';
  const pending = pendingFlow(auth)?.id;
  if (pending === 'mfa_authenticate') return '/2fa/authenticate';
  if (pending === 'mfa_signup_webauthn') return '/signup/passkey/create';
  if (pending === 'login_by_code') return '/login/code/confirm';
  if (pending === 'verify_email') return '/verify-email';
  if (pending === 'provider_signup') return '/provider/signup';
  return '/login';
}

/** Takes in an answer about the session (any 200 with a user, or a 401 with flows) and goes where it leads. */
function applyAuth(envelope) {
  state.auth = envelope;
  return go(homeFor(envelope));
}

/** Asks the server who is signed in, e.g. after a 409 said someone already is. */
async function refreshSession() {
  const session = await call('GET', '/auth/session');
  if (session.status === 200 || session.status === 401) return applyAuth(session);
  state.errors = ['The server cannot tell who is signed in just now. Please try again.'];
  return render();
}

/** Replaces the page with a view, unless a newer render has begun; shows the waiting messages once. */
function mount(ticket, title, ...content) {
  if (ticket !== renders) return false;
  document.title = `${title} · ${SITE_NAME}`;
  const heading = h('h1', { tabindex: '-1' }, title);
  // A view may leave out a part (null) that it has nothing for.
  const parts = content.filter((part) => part !== null && part !== undefined && part !== false);
  main.replaceChildren(messageList(state.messages) ?? '', messageList(state.errors, 'error') ?? '', heading, ...parts);
  state.messages = [];
  state.errors = [];
  main.removeAttribute('aria-busy');
  heading.focus({ preventScroll: true });
  return true;
}

/** Marks the page as loading while a view fetches its data. */
function loading(ticket) {
  if (ticket === renders) main.setAttribute('aria-busy', 'true');
}

async function signOut() {
  const answer = await call('DELETE', '/auth/session');
  if (answer.status === 401) {
    state.messages.push('You have signed out.');
    return applyAuth(answer);
  }
  state.errors = ['Signing out failed. Please try again.'];
  return render();
}

function renderNav() {
  if (isAuthenticated(state.auth)) {
    nav.replaceChildren(
      h('a', { href: '#/account' }, 'Account'),
      h('a', { href: '#/account/2fa' }, 'Two-factor authentication'),
      redirectProviders(app).length > 0 ? h('a', { href: '#/account/providers' }, 'Connected accounts') : '',
      actionButton('Sign out', signOut, { class: 'link-button' }),
    );
  } else {
    nav.replaceChildren(h('a', { href: '#/login' }, 'Sign in'), isOpenForSignup(app) ? h('a', { href: '#/signup' }, 'Sign up') : '');
  }
}

/**
 * Sends `request()`; when the answer asks for reauthentication, shows the prompt and, once the
 * person has confirmed, sends it again (once). Resolves to `{ answer, prompted }`, with `answer`
 * undefined when the person cancelled.
 */
async function withReauthentication(request) {
  const first = await request();
  if (!needsReauthentication(first)) return { answer: first, prompted: false };
  const confirmed = await new Promise((resolve) => {
    const ticket = ++renders;
    reauthenticateView(app, ticket, first.data?.flows ?? [], resolve);
  });
  if (!confirmed) return { answer: undefined, prompted: true };
  return { answer: await request(), prompted: true };
}

/** What the views use of the app. */
const app = { state, render, mount, loading, applyAuth, refreshSession, withReauthentication };

/**
 * The ways this account can confirm who it is, as the API lists them in a 401 (`reauthenticate`
 * with a password, `mfa_reauthenticate` with an authenticator): a provider's callback says only
 * `reauthentication_required`.
 */
async function reauthenticationFlows() {
  const flows = [];
  if (state.auth.data?.user?.has_usable_password) flows.push({ id: 'reauthenticate' });
  const authenticators = await call('GET', '/account/authenticators');
  if (authenticators.status === 200 && Array.isArray(authenticators.data) && authenticators.data.length > 0) {
    flows.push({ id: 'mfa_reauthenticate', types: [...new Set(authenticators.data.map((authenticator) => authenticator.type))] });
  }
  return flows;
}

/**
 * A connect refused because the last sign-in is not recent: "Confirm it is you", then the same
 * connect again, which leaves for the provider. Cancelled, back to the connected accounts.
 */
async function connectAgain(providerId) {
  const provider = redirectProviders(app).find((candidate) => candidate.id === providerId);
  if (!provider) {
    state.errors.push(providerErrorMessage({ error: 'reauthentication_required', process: 'connect' }));
    return go('/account/providers');
  }
  // The address bar leaves the callback route, so that a reload shows the accounts, not a second attempt.
  window.history.replaceState(window.history.state, '', '#/account/providers');
  const flows = await reauthenticationFlows();
  const confirmed = await new Promise((resolve) => {
    const ticket = ++renders;
    reauthenticateView(app, ticket, flows, resolve);
  });
  if (!confirmed) return render();
  const ticket = ++renders;
  const again = providerForm(provider, 'connect', `Continue to ${provider.name}`);
  mount(ticket, `Connect ${provider.name}`, h('p', {}, `Thank you. Taking you to ${provider.name} to connect your account…`), again);
  again.requestSubmit();
  return undefined;
}

/**
 * The provider's callback sent the browser back (`process` is in the route; a failure is in
 * `state.providerError`). The page has just loaded, so `state.auth` is the session as the
 * sign-in left it: signed in, or waiting at a step (the code, the mailed link, the signup form),
 * and the app goes there as after any sign-in. A connect goes back to the connected accounts.
 */
function providerReturned(process, providerId) {
  const returned = state.providerError;
  state.providerError = undefined;
  if (process === 'connect' && isAuthenticated(state.auth)) {
    if (returned?.error === 'reauthentication_required') return connectAgain(providerId);
    if (returned) state.errors.push(providerErrorMessage(returned));
    else state.messages.push('The third-party account has been connected.');
    return go('/account/providers');
  }
  if (returned) state.errors.push(providerErrorMessage(returned));
  return go(homeFor(state.auth));
}

/** Shows the view for the address bar's route, or sends the person where their session belongs. */
async function render() {
  const ticket = ++renders;
  const path = currentPath();
  renderNav();
  // A mailed confirmation link works whoever is signed in, or nobody.
  const verify = /^\/verify\/(.+)$/.exec(path);
  if (verify) return verifyKeyView(app, ticket, decodeURIComponent(verify[1] ?? ''));
  const returned = providerCallback(path);
  if (returned) return providerReturned(returned.process, returned.providerId);
  const home = homeFor(state.auth);
  if (isAuthenticated(state.auth)) {
    if (path === '/account') return accountView(app, ticket);
    if (path === '/account/2fa') return totpView(app, ticket);
    if (path === '/account/providers') return providersView(app, ticket);
    if (path === '/account/keys' && securityKeysSupported(app)) return keysView(app, ticket);
    return go(home);
  }
  // A login waiting for a second factor, or a passkey signup for its passkey, can only go on (or be cancelled there).
  if (home === '/2fa/authenticate') return path === home ? mfaAuthenticateView(app, ticket) : go(home);
  if (home === '/signup/passkey/create') return path === home ? passkeyCreateView(app, ticket) : go(home);
  if (path === '/login') return loginView(app, ticket);
  if (path === '/login/code' && loginByCodeEnabled(app)) return requestLoginCodeView(app, ticket);
  if (path === '/login/code/confirm' && home === path) return confirmLoginCodeView(app, ticket);
  if (path === '/signup') return signupView(app, ticket);
  if (path === '/signup/passkey') return passkeySignupView(app, ticket);
  if (path === '/verify-email' && home === path) return verificationByCodeEnabled(app) ? verifyEmailCodeView(app, ticket) : verifyEmailView(app, ticket);
  if (path === '/provider/signup' && home === '/provider/signup') return providerSignupView(app, ticket);
  return go(home);
}

/** `#/provider/callback/login` or `#/provider/callback/connect/<provider>`: where a provider sends the browser back. */
function providerCallback(path) {
  const match = new RegExp(`^${CALLBACK_ROUTE}/(login|connect)(?:/([^/]+))?$`).exec(path);
  if (!match) return undefined;
  let providerId = '';
  try {
    providerId = decodeURIComponent(match[2] ?? '');
  } catch {
    // Not an id the app made: no provider to connect again.
  }
  return { process: match[1] === 'connect' ? 'connect' : 'login', providerId };
}

async function start() {
  // A provider's callback (or a refused start) that failed put `?error=` before the fragment: the
  // callback route says what it means; any other route (the API's error route) shows it at once.
  const providerError = takeProviderError();
  if (providerError && providerCallback(currentPath())) state.providerError = providerError;
  else if (providerError) state.errors.push(providerErrorMessage(providerError));
  const [config, session] = await Promise.all([call('GET', '/config'), call('GET', '/auth/session')]);
  state.config = config.status === 200 ? config.data : undefined;
  window.addEventListener('hashchange', () => void render());
  if (session.status === 200 || session.status === 401) {
    state.auth = session;
    return render();
  }
  const ticket = ++renders;
  mount(ticket, 'Something went wrong', h('p', {}, 'The server did not answer as expected.'), actionButton('Try again', () => Promise.resolve(window.location.reload())));
  return undefined;
}

void start();
