/**
 * The views for getting in: sign in (with a link to a mailed code and a passkey button where the
 * site has them), sign up (each with a button per third-party provider), the form that completes
 * a signup through a provider, "check your email", a mailed confirmation link, the two-factor step
 * of a login (a security key or a code), and the "confirm it is you" prompt. Each sends one
 * request and hands any answer about the session to `app.applyAuth`, which routes on it.
 */
import { call, errorMessages, isAuthenticated, isSessionAnswer, pendingFlow } from './api.js';
import { loginCodeLink } from './code-views.js';
import { actionButton, form, h } from './dom.js';
import { passkeyLoginButton, passkeySignupEnabled, reauthenticateWithKey, securityKeyStep } from './passkey-views.js';
import { providerButtons } from './provider-views.js';

/** What the person who is signed in (or confirming) is called. */
export function displayName(user) {
  return String(user?.username ?? user?.display ?? '');
}

export function loginView(app, ticket) {
  const signIn = form({
    name: 'Sign in',
    fields: [
      { name: 'login', label: 'Username', autocomplete: 'username', type: 'text' },
      { name: 'password', label: 'Password', type: 'password', autocomplete: 'current-password' },
    ],
    submitLabel: 'Sign in',
    async onSubmit({ login, password }) {
      // The API takes the identifier under the name of the site's login method.
      const answer = await call('POST', '/auth/login', { body: { username: login, password } });
      if (isSessionAnswer(answer)) return void (await app.applyAuth(answer));
      if (answer.status === 409) return void (await app.refreshSession());
      return errorMessages(answer);
    },
  });
  app.mount(ticket, 'Sign in', signIn, loginCodeLink(app), passkeyLoginButton(app), providerButtons(app, 'Sign in'), h('p', {}, 'No account yet? ', h('a', { href: '#/signup' }, 'Sign up'), '.'));
}

/** Whether the site takes new accounts (config's `account.is_open_for_signup`; assumed open when unknown). */
export function isOpenForSignup(app) {
  return app.state.config?.account?.is_open_for_signup !== false;
}

export async function signupView(app, ticket) {
  if (!isOpenForSignup(app)) {
    app.mount(ticket, 'Sign up', h('p', { id: 'spa-signup-closed' }, 'Sign up is closed on this site.'), h('p', {}, h('a', { href: '#/login' }, 'Sign in')));
    return;
  }
  const signUp = form({
    name: 'Sign up',
    fields: [
      { name: 'email', label: 'Email', type: 'email', autocomplete: 'email' },
      { name: 'username', label: 'Username', autocomplete: 'username' },
      { name: 'password', label: 'Password', type: 'password', autocomplete: 'new-password' },
    ],
    submitLabel: 'Sign up',
    async onSubmit(values) {
      const answer = await call('POST', '/auth/signup', { body: values });
      if (isSessionAnswer(answer)) return void (await app.applyAuth(answer));
      if (answer.status === 409) return void (await app.refreshSession());
      if (answer.status === 403) return ['Sign up is closed on this site.'];
      return errorMessages(answer);
    },
  });
  app.loading(ticket);
  const withPasskey = await passkeySignupEnabled(app);
  app.mount(
    ticket,
    'Sign up',
    signUp,
    withPasskey ? h('p', {}, h('a', { href: '#/signup/passkey', id: 'spa-passkey-signup-link' }, 'Sign up with a passkey'), ' instead of a password.') : null,
    providerButtons(app, 'Sign up'),
    h('p', {}, 'Already have an account? ', h('a', { href: '#/login' }, 'Sign in'), '.'),
  );
}

/**
 * The form a signup through a provider waits for (the pending `provider_signup` flow): the
 * provider's answer could not make the account alone, e.g. it gave no address, or one that
 * already has an account here. Shows what the provider gave; Cancel ends the signup.
 */
export async function providerSignupView(app, ticket) {
  app.loading(ticket);
  const info = await call('GET', '/auth/provider/signup');
  const startAgain = actionButton('Cancel', async () => app.applyAuth(await call('DELETE', '/auth/session')));
  if (info.status !== 200) {
    // 409: the signup waits no more (it expired). Shown rather than routed on, so that a session
    // that still lists the flow cannot send the app round in a loop.
    const reason = info.status === 409 ? 'This signup has expired. Please sign in again.' : errorMessages(info).join(' ');
    app.mount(ticket, 'Complete your signup', h('p', { id: 'spa-provider-signup-unavailable' }, reason), startAgain);
    return undefined;
  }
  const user = info.data?.user ?? {};
  const providerName = String(info.data?.account?.provider?.name ?? 'the third-party provider');
  const complete = form({
    name: 'Complete your signup',
    fields: [
      { name: 'email', label: 'Email', type: 'email', autocomplete: 'email', value: String(user.email ?? '') },
      { name: 'username', label: 'Username', autocomplete: 'username', value: String(user.username ?? '') },
    ],
    submitLabel: 'Sign up',
    async onSubmit(values) {
      const answer = await call('POST', '/auth/provider/signup', { body: values });
      if (isSessionAnswer(answer)) return void (await app.applyAuth(answer));
      if (answer.status === 409) return void (await app.refreshSession());
      if (answer.status === 403) return ['Sign up is closed on this site.'];
      return errorMessages(answer);
    },
    after: startAgain,
  });
  app.mount(
    ticket,
    'Complete your signup',
    h('p', { id: 'spa-provider-signup' }, `You are about to use your ${providerName} account to sign up. As a final step, please complete the following form:`),
    complete,
  );
  return undefined;
}

/** The step after a signup (or a login) under mandatory verification: the link is in the mail. */
export function verifyEmailView(app, ticket) {
  app.mount(
    ticket,
    'Verify your email address',
    h('p', { id: 'spa-verify-email' }, 'We have sent you an email to verify your address. Follow the link in it to finish.'),
    h('p', {}, h('a', { href: '#/login' }, 'Sign in'), ' with another account, or ', h('a', { href: '#/signup' }, 'sign up'), ' again.'),
  );
}

/**
 * A mailed confirmation key (`#/verify/<key>`): shows what it confirms and changes nothing until
 * the person presses Confirm, as the site's own confirmation page does. A link a mail scanner
 * opens must not confirm anything by itself.
 */
export async function verifyKeyView(app, ticket, key) {
  app.loading(ticket);
  const info = await call('GET', '/auth/email/verify', { headers: { 'X-Email-Verification-Key': key } });
  if (info.status !== 200) {
    app.mount(
      ticket,
      'Confirm email address',
      h('p', { id: 'spa-verify-invalid' }, 'This confirmation link has expired or is not valid.'),
      h('p', {}, h('a', { href: '#/' }, 'Continue')),
    );
    return;
  }
  const email = String(info.data?.email ?? '');
  const confirm = form({
    name: 'Confirm email address',
    fields: [],
    submitLabel: 'Confirm',
    async onSubmit() {
      const answer = await call('POST', '/auth/email/verify', { body: { key } });
      // 401 is no failure here: the address is confirmed, and the login (if any) goes on from the flows.
      if (answer.status === 200 || answer.status === 401) {
        app.state.messages.push(`You have confirmed ${email}.`);
        if (isSessionAnswer(answer)) return void (await app.applyAuth(answer));
        return void (await app.refreshSession());
      }
      return errorMessages(answer);
    },
  });
  app.mount(
    ticket,
    'Confirm email address',
    h('p', { id: 'spa-verify-info' }, `Please confirm that ${email} is an email address for the account ${displayName(info.data?.user)}.`),
    confirm,
  );
}

/** What the two-factor step asks for, from the kinds of authenticator the account has. */
function secondStepText(types) {
  const codes = [];
  if (types.includes('totp')) codes.push('the code your authenticator app shows now');
  if (types.includes('recovery_codes')) codes.push('one of your recovery codes');
  const enter = codes.length > 0 ? `enter ${codes.join(', or ')}` : '';
  if (types.includes('webauthn')) return enter ? `Use your security key, or ${enter}.` : 'Use your security key.';
  return enter ? `E${enter.slice(1)}.` : 'Confirm it is you.';
}

/**
 * The two-factor step of a login, with what this account has (the pending flow's `types`): a
 * security key, a code from the authenticator app, or a recovery code.
 */
export function mfaAuthenticateView(app, ticket) {
  const types = pendingFlow(app.state.auth)?.types ?? ['totp', 'recovery_codes'];
  const code = form({
    name: 'Two-factor authentication',
    fields: [{ name: 'code', label: 'Code', autocomplete: 'one-time-code', inputmode: 'numeric' }],
    submitLabel: 'Sign in',
    async onSubmit(values) {
      const answer = await call('POST', '/auth/2fa/authenticate', { body: values });
      if (isSessionAnswer(answer)) return void (await app.applyAuth(answer));
      return errorMessages(answer);
    },
  });
  const withCode = types.includes('totp') || types.includes('recovery_codes');
  app.mount(
    ticket,
    'Two-factor authentication',
    h('p', {}, secondStepText(types)),
    types.includes('webauthn') ? securityKeyStep(app) : null,
    withCode ? code : null,
    h('div', { class: 'actions' }, actionButton('Cancel', async () => app.applyAuth(await call('DELETE', '/auth/session')))),
  );
}

/**
 * "Confirm it is you", shown when an action answered that the session must prove again who the
 * person is: the password, or a code or a security key when the account has a second factor (the
 * API lists which in `flows`, with the kinds in `types`). `done(true)` once confirmed,
 * `done(false)` when the person cancels.
 */
export function reauthenticateView(app, ticket, flows, done) {
  const ids = flows.map((flow) => flow.id);
  const cancel = () => {
    done(false);
    return Promise.resolve();
  };
  const confirmed = async (answer) => {
    if (isAuthenticated(answer)) {
      app.state.auth = answer;
      done(true);
      return undefined;
    }
    if (answer.status === 401) return void (await app.applyAuth(answer));
    return errorMessages(answer);
  };
  const confirmWith = (path) => async (values) => confirmed(await call('POST', path, { body: values }));
  const forms = [];
  if (ids.includes('reauthenticate')) {
    forms.push(
      h('p', {}, 'Enter your password to continue.'),
      form({ name: 'Confirm with password', fields: [{ name: 'password', label: 'Password', type: 'password', autocomplete: 'current-password' }], submitLabel: 'Confirm', onSubmit: confirmWith('/auth/reauthenticate') }),
    );
  }
  const types = flows.find((flow) => flow.id === 'mfa_reauthenticate')?.types ?? ['totp', 'recovery_codes'];
  if (ids.includes('mfa_reauthenticate') && types.includes('webauthn')) {
    forms.push(h('p', {}, forms.length > 0 ? 'Or use your security key.' : 'Use your security key.'), reauthenticateWithKey(confirmed));
  }
  if (ids.includes('mfa_reauthenticate') && (types.includes('totp') || types.includes('recovery_codes'))) {
    const what = types.includes('totp') ? 'a code from your authenticator app, or a recovery code' : 'one of your recovery codes';
    forms.push(
      h('p', {}, forms.length > 0 ? `Or enter ${what}.` : `Enter ${what}.`),
      form({ name: 'Confirm with a code', fields: [{ name: 'code', label: 'Code', autocomplete: 'one-time-code', inputmode: 'numeric' }], submitLabel: 'Confirm with code', onSubmit: confirmWith('/auth/2fa/reauthenticate') }),
    );
  }
  if (forms.length === 0) forms.push(h('p', {}, 'This account has no way to confirm it here. Sign out and sign in again.'));
  app.mount(ticket, 'Confirm it is you', h('p', {}, 'This change needs you to confirm your identity first.'), ...forms, actionButton('Cancel', cancel));
}
