/**
 * Getting in with a security key or a passkey (WebAuthn): the login view's "Sign in with a
 * passkey" (config's `mfa.passkey_login_enabled`), the key as the second step of a login or to
 * confirm who it is, and signing up with an address and a passkey (the `mfa_signup_webauthn`
 * flow). Each ceremony asks the API for its options (GET), runs it in the browser (webauthn.js)
 * and posts the browser's answer to the same path.
 */
import { call, errorMessages, isSessionAnswer } from './api.js';
import { actionButton, form, h } from './dom.js';
import { CeremonyError, createCredential, getCredential } from './webauthn.js';

/** Whether the site offers security keys at all (config's `mfa.supported_types`). */
export function securityKeysSupported(app) {
  return (app.state.config?.mfa?.supported_types ?? []).includes('webauthn');
}

/** Whether a passkey alone signs in here. */
export function passkeyLoginEnabled(app) {
  return app.state.config?.mfa?.passkey_login_enabled === true;
}

/**
 * Whether the site takes signups with a passkey. allauth's `config` does not say, so unless it
 * does (`mfa.passkey_signup_enabled`), the app asks the signup's route once: it exists (a 409,
 * "nothing pending") only where passkey signup is on, and only a site with keys and verification
 * by code can have it on, so no other site is asked.
 *
 * @returns {Promise<boolean>}
 */
export function passkeySignupEnabled(app) {
  const said = app.state.config?.mfa?.passkey_signup_enabled;
  if (typeof said === 'boolean') return Promise.resolve(said);
  if (!securityKeysSupported(app) || app.state.config?.account?.email_verification_by_code_enabled !== true) return Promise.resolve(false);
  app.state.passkeySignup ??= call('GET', '/auth/webauthn/signup').then((answer) => answer.status === 200 || answer.status === 409);
  return app.state.passkeySignup;
}

/**
 * The request options at `path`, the browser's assertion, and that assertion posted back to
 * `path`. Resolves to the API's answer, or to the messages to show when the browser (or the
 * options' request) failed.
 *
 * @returns {Promise<{ answer: any } | { messages: string[] }>}
 */
export async function assertAt(path) {
  const options = await call('GET', path);
  if (options.status !== 200) return { answer: options };
  let credential;
  try {
    credential = await getCredential(options.data?.request_options ?? {});
  } catch (error) {
    return { messages: [error instanceof CeremonyError ? error.message : 'Something went wrong with the security key. Please try again.'] };
  }
  return { answer: await call('POST', path, { body: { credential } }) };
}

/** A button that runs `onAnswer` with the API's answer to a ceremony at `path`, showing failures as its form's errors. */
export function keyButton(name, label, path, onAnswer) {
  return form({
    name,
    fields: [],
    submitLabel: label,
    async onSubmit() {
      const outcome = await assertAt(path);
      if ('messages' in outcome) return outcome.messages;
      return onAnswer(outcome.answer);
    },
  });
}

/** The login view's passkey button: no name, no password; the browser offers the passkeys it holds for this site. */
export function passkeyLoginButton(app) {
  if (!passkeyLoginEnabled(app)) return null;
  return h(
    'section',
    { class: 'section', id: 'spa-passkey-login', 'aria-labelledby': 'spa-passkey-heading' },
    h('h2', { id: 'spa-passkey-heading' }, 'Or use a passkey'),
    keyButton('Sign in with a passkey', 'Sign in with a passkey', '/auth/webauthn/login', async (answer) => {
      // 401 is no failure: the passkey was good, and the login waits at a step (e.g. verifying the address).
      if (isSessionAnswer(answer)) return void (await app.applyAuth(answer));
      if (answer.status === 409) return void (await app.refreshSession());
      return errorMessages(answer);
    }),
  );
}

/** The second step of a login, with a key: a 200 signs in. */
export function securityKeyStep(app) {
  return keyButton('Use a security key', 'Use a security key', '/auth/webauthn/authenticate', async (answer) => {
    if (isSessionAnswer(answer)) return void (await app.applyAuth(answer));
    return errorMessages(answer);
  });
}

/** "Confirm it is you" with a key; `confirmed(answer)` takes the API's answer as the other ways' forms do. */
export function reauthenticateWithKey(confirmed) {
  return keyButton('Confirm with a security key', 'Confirm with a security key', '/auth/webauthn/reauthenticate', confirmed);
}

/**
 * Signing up with a passkey, first step: the address (no password). The API mails a code to it
 * and the signup waits at `verify_email`; once the code is in, at `mfa_signup_webauthn`.
 */
export async function passkeySignupView(app, ticket) {
  app.loading(ticket);
  if (!(await passkeySignupEnabled(app))) {
    app.mount(ticket, 'Sign up with a passkey', h('p', { id: 'spa-passkey-signup-off' }, 'This site does not take signups with a passkey.'), h('p', {}, h('a', { href: '#/signup' }, 'Sign up'), ' with a password.'));
    return;
  }
  const signUp = form({
    name: 'Sign up with a passkey',
    fields: [
      { name: 'email', label: 'Email', type: 'email', autocomplete: 'email' },
%% if username %%
      { name: 'username', label: 'Username', autocomplete: 'username' },
%% endif %%
    ],
    submitLabel: 'Sign up',
    async onSubmit(values) {
      const answer = await call('POST', '/auth/webauthn/signup', { body: values });
      if (isSessionAnswer(answer)) return void (await app.applyAuth(answer));
      if (answer.status === 409) return void (await app.refreshSession());
      if (answer.status === 403) return ['Sign up is closed on this site.'];
      return errorMessages(answer);
    },
  });
  app.mount(
    ticket,
    'Sign up with a passkey',
    h('p', {}, 'No password: we email you a code to confirm your address, then your device makes a passkey for this site.'),
    signUp,
    h('p', {}, h('a', { href: '#/signup' }, 'Sign up with a password'), ' instead.'),
  );
}

/** Signing up with a passkey, last step (the pending `mfa_signup_webauthn` flow): the device makes the passkey, which signs in. */
export function passkeyCreateView(app, ticket) {
  const create = form({
    name: 'Create your passkey',
    fields: [{ name: 'name', label: 'Name of this passkey', value: 'Passkey', autocomplete: 'off' }],
    submitLabel: 'Create passkey',
    async onSubmit({ name }) {
      const options = await call('GET', '/auth/webauthn/signup');
      if (options.status === 409) return void (await app.refreshSession());
      if (options.status !== 200) return errorMessages(options);
      let credential;
      try {
        credential = await createCredential(options.data?.creation_options ?? {});
      } catch (error) {
        return [error instanceof CeremonyError ? error.message : 'Something went wrong with the passkey. Please try again.'];
      }
      const answer = await call('PUT', '/auth/webauthn/signup', { body: { name, credential } });
      if (isSessionAnswer(answer)) return void (await app.applyAuth(answer));
      if (answer.status === 409) return void (await app.refreshSession());
      return errorMessages(answer);
    },
    after: actionButton('Cancel', async () => app.applyAuth(await call('DELETE', '/auth/session'))),
  });
  app.mount(ticket, 'Create your passkey', h('p', { id: 'spa-passkey-create' }, 'Your address is confirmed. Now create the passkey you will sign in with.'), create);
}
