/**
 * The example site's single-page app: a plain-JavaScript client of Latchkey's headless API
 * (allauth's browser client contract), served from /spa/ with no build step and no framework.
 *
 * It routes as allauth's own clients do, on the API's answers rather than on its own guesses:
 * a 200 with a user is "signed in"; a 401 lists the flows, and the one marked `is_pending` is the
 * step a login waits at (confirm the email address, enter a code); a 401 whose `meta` says the
 * session is authenticated asks the person to prove again who they are, after which the action
 * is sent again. Views live in auth-views.js and account-views.js; this file holds the state,
 * the router and the page frame.
 */
/* global document, window */
import { call, isAuthenticated, needsReauthentication, pendingFlow } from './api.js';
import { accountView, totpView } from './account-views.js';
import { isOpenForSignup, loginView, mfaAuthenticateView, reauthenticateView, signupView, verifyEmailView, verifyKeyView } from './auth-views.js';
import { actionButton, h, messageList } from './dom.js';

const SITE_NAME = 'My Awesome Project';
const main = /** @type {HTMLElement} */ (document.getElementById('main'));
const nav = /** @type {HTMLElement} */ (document.getElementById('nav'));

/**
 * What the app knows: the server's configuration, the last answer about the session (a 200 with
 * the user, or a 401 with the flows), and the messages to show on the next view.
 */
const state = {
  /** @type {any} */ config: undefined,
  /** @type {any} */ auth: { status: 401, data: { flows: [] }, meta: { is_authenticated: false } },
  /** @type {string[]} */ messages: [],
  /** @type {string[]} */ errors: [],
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
  if (pending === 'verify_email') return '/verify-email';
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
  main.replaceChildren(messageList(state.messages) ?? '', messageList(state.errors, 'error') ?? '', heading, ...content);
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

/** Shows the view for the address bar's route, or sends the person where their session belongs. */
async function render() {
  const ticket = ++renders;
  const path = currentPath();
  renderNav();
  // A mailed confirmation link works whoever is signed in, or nobody.
  const verify = /^\/verify\/(.+)$/.exec(path);
  if (verify) return verifyKeyView(app, ticket, decodeURIComponent(verify[1] ?? ''));
  const home = homeFor(state.auth);
  if (isAuthenticated(state.auth)) {
    if (path === '/account') return accountView(app, ticket);
    if (path === '/account/2fa') return totpView(app, ticket);
    return go(home);
  }
  // A login waiting for a code can only go on (or be cancelled there).
  if (home === '/2fa/authenticate') return path === home ? mfaAuthenticateView(app, ticket) : go(home);
  if (path === '/login') return loginView(app, ticket);
  if (path === '/signup') return signupView(app, ticket);
  if (path === '/verify-email' && home === '/verify-email') return verifyEmailView(app, ticket);
  return go(home);
}

async function start() {
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
