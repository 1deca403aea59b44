/**
 * The views of a signed-in person: their email addresses (add, send the link or code again, make
 * primary, remove), their authenticator app (activate from the secret, show recovery codes,
 * deactivate) and their connected third-party accounts (connect, disconnect). Changes that the
 * API guards with reauthentication go through `app.withReauthentication`, which asks for the
 * password and sends the change again.
 */
/* global document */
import { call, errorMessages } from './api.js';
import { displayName } from './auth-views.js';
import { addressCodeForm, verificationByCodeEnabled } from './code-views.js';
import { actionButton, form, h } from './dom.js';
import { securityKeysSupported } from './passkey-views.js';
import { providerForm, redirectProviders } from './provider-views.js';

/** An API timestamp (seconds since the epoch) as a person reads it, in UTC. */
export function formatTime(seconds) {
  if (typeof seconds !== 'number') return '';
  return `${new Date(seconds * 1000).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** A 401 that says nobody is signed in (the session ended elsewhere): back to the router. */
export function signedOut(answer) {
  return answer.status === 401 && answer.meta?.is_authenticated !== true;
}

/**
 * Runs a change and shows the account again with what happened: `success` on a 200, the API's
 * errors otherwise. Returns the errors instead when `keepForm` and no prompt replaced the page,
 * so that the form they belong to can show them next to what was typed.
 */
export async function change(app, request, success, keepForm = false) {
  const { answer, prompted } = await app.withReauthentication(request);
  if (answer === undefined) return void (await app.render());
  if (answer.status === 200) {
    app.state.messages.push(success);
    return void (await app.render());
  }
  if (signedOut(answer)) return void (await app.applyAuth(answer));
  if (keepForm && !prompted) return errorMessages(answer);
  app.state.errors = errorMessages(answer);
  return void (await app.render());
}

function addressStatus(address) {
  const parts = [];
  if (address.primary) parts.push('Primary');
  parts.push(address.verified ? 'Verified' : 'Unverified');
  return parts.join(', ');
}

function addressRow(app, address) {
  const email = String(address.email);
  const body = { email };
  const actions = [];
  if (address.verified && !address.primary) {
    actions.push(actionButton('Make primary', () => change(app, () => call('PATCH', '/account/email', { body: { email, primary: true } }), `${email} is now your primary email address.`), { 'aria-label': `Make ${email} primary` }));
  }
  if (!address.verified) {
    actions.push(actionButton('Send again', () => change(app, () => call('PUT', '/account/email', { body }), `Confirmation email sent to ${email}.`), { 'aria-label': `Send the confirmation email to ${email} again` }));
  }
  if (!address.primary) {
    actions.push(actionButton('Remove', () => change(app, () => call('DELETE', '/account/email', { body }), `Removed ${email}.`), { 'aria-label': `Remove ${email}` }));
  }
  return h('tr', {}, h('td', {}, email), h('td', { class: 'status' }, addressStatus(address)), h('td', {}, h('div', { class: 'actions' }, actions)));
}

export async function accountView(app, ticket) {
  app.loading(ticket);
  const answer = await call('GET', '/account/email');
  if (signedOut(answer)) return app.applyAuth(answer);
  const user = app.state.auth.data?.user;
  const addresses = answer.status === 200 && Array.isArray(answer.data) ? answer.data : [];
  const add = form({
    name: 'Add an email address',
    fields: [{ name: 'email', label: 'Add an email address', type: 'email', autocomplete: 'email' }],
    submitLabel: 'Add email',
    onSubmit: ({ email }) => change(app, () => call('POST', '/account/email', { body: { email } }), `Confirmation email sent to ${email}.`, true),
  });
  app.mount(
    ticket,
    'Your account',
    h('p', { id: 'spa-signed-in' }, `Signed in as ${displayName(user)}.`),
    h(
      'section',
      { class: 'section', 'aria-labelledby': 'spa-emails-heading' },
      h('h2', { id: 'spa-emails-heading' }, 'Email addresses'),
      answer.status === 200
        ? h('table', { class: 'table', id: 'spa-emails' }, h('thead', {}, h('tr', {}, h('th', {}, 'Address'), h('th', {}, 'Status'), h('th', {}, 'Actions'))), h('tbody', {}, addresses.map((address) => addressRow(app, address))))
        : h('p', { role: 'alert' }, ...errorMessages(answer)),
      // Where the site mails codes rather than links, the code of the last address added confirms it here.
      verificationByCodeEnabled(app) && addresses.some((address) => !address.verified) ? addressCodeForm(app) : null,
      add,
    ),
    h(
      'section',
      { class: 'section', 'aria-labelledby': 'spa-2fa-heading' },
      h('h2', { id: 'spa-2fa-heading' }, 'Two-factor authentication'),
      h('p', {}, h('a', { href: '#/account/2fa' }, 'Manage your authenticator app')),
      securityKeysSupported(app) ? h('p', {}, h('a', { href: '#/account/keys' }, 'Manage your security keys and passkeys')) : null,
    ),
    redirectProviders(app).length > 0
      ? h(
          'section',
          { class: 'section', 'aria-labelledby': 'spa-connected-heading' },
          h('h2', { id: 'spa-connected-heading' }, 'Connected accounts'),
          h('p', {}, h('a', { href: '#/account/providers' }, 'Manage the third-party accounts you sign in with')),
        )
      : null,
  );
  return undefined;
}

function providerAccountRow(app, account) {
  const providerName = String(account.provider?.name ?? account.provider?.id ?? '');
  const display = String(account.display ?? account.uid ?? '');
  // allauth names the account by its provider and its uid at the provider.
  const body = { provider: String(account.provider?.id ?? ''), account: String(account.uid ?? '') };
  const disconnect = actionButton('Disconnect', () => change(app, () => call('DELETE', '/account/providers', { body }), `Disconnected your ${providerName} account ${display}.`), {
    'aria-label': `Disconnect ${providerName} account ${display}`,
  });
  return h('tr', {}, h('td', {}, providerName), h('td', {}, display), h('td', {}, h('div', { class: 'actions' }, disconnect)));
}

/**
 * The third-party accounts that sign in to this account, each with Disconnect (refused while it
 * is the only way in: no password, or no verified address), and a Connect button per provider,
 * which leaves the app for the provider as a sign-in does and comes back to
 * `#/provider/callback/connect/<provider>`.
 */
export async function providersView(app, ticket) {
  app.loading(ticket);
  const answer = await call('GET', '/account/providers');
  if (signedOut(answer)) return app.applyAuth(answer);
  const accounts = answer.status === 200 && Array.isArray(answer.data) ? answer.data : [];
  let list;
  if (answer.status !== 200) list = h('p', { role: 'alert' }, ...errorMessages(answer));
  else if (accounts.length === 0) list = h('p', { id: 'spa-no-providers' }, 'You have no third-party accounts connected to this account.');
  else {
    list = h(
      'table',
      { class: 'table', id: 'spa-provider-accounts' },
      h('thead', {}, h('tr', {}, h('th', {}, 'Provider'), h('th', {}, 'Account'), h('th', {}, 'Actions'))),
      h('tbody', {}, accounts.map((account) => providerAccountRow(app, account))),
    );
  }
  const providers = redirectProviders(app);
  app.mount(
    ticket,
    'Connected accounts',
    h('p', {}, 'You can sign in to your account with these third-party accounts.'),
    list,
    providers.length > 0
      ? h(
          'section',
          { class: 'section', 'aria-labelledby': 'spa-connect-heading' },
          h('h2', { id: 'spa-connect-heading' }, 'Add a third-party account'),
          h('div', { class: 'actions' }, providers.map((provider) => providerForm(provider, 'connect', `Connect ${provider.name}`))),
        )
      : null,
  );
  return undefined;
}

/** The secret to type into an authenticator app, and the otpauth:// link that carries it. */
function activationView(app, ticket, meta) {
  const secret = String(meta?.secret ?? '');
  const url = String(meta?.totp_url ?? '');
  const activate = form({
    name: 'Activate',
    fields: [{ name: 'code', label: 'Code from the app', autocomplete: 'one-time-code', inputmode: 'numeric' }],
    submitLabel: 'Activate',
    async onSubmit({ code }) {
      const { answer, prompted } = await app.withReauthentication(() => call('POST', '/account/authenticators/totp', { body: { code } }));
      if (answer === undefined) return void (await app.render());
      if (answer.status === 200) {
        app.state.messages.push('Authenticator app activated.');
        if (answer.meta?.recovery_codes_generated) app.state.messages.push('Recovery codes were made for you: show them below and keep them somewhere safe.');
        return void (await app.render());
      }
      if (signedOut(answer)) return void (await app.applyAuth(answer));
      if (!prompted) return errorMessages(answer);
      app.state.errors = errorMessages(answer);
      return void (await app.render());
    },
  });
  app.mount(
    ticket,
    'Activate authenticator app',
    h(
      'ol',
      { class: 'steps' },
      h('li', {}, 'In your authenticator app, add an account with this key: ', h('code', { id: 'spa-totp-secret', class: 'secret' }, secret)),
      // Only an otpauth: link is made a link: the page never turns data into a javascript: URL.
      url.startsWith('otpauth://') ? h('li', {}, 'Or, on a device with the app, open ', h('a', { id: 'spa-totp-url', href: url }, 'this otpauth link'), '.') : null,
      h('li', {}, 'Enter the code the app shows.'),
    ),
    activate,
  );
}

/** Fetches the unused recovery codes (the API may first ask who it is) and lists them in `container`. */
export async function showRecoveryCodes(app, container) {
  const { answer } = await app.withReauthentication(() => call('GET', '/account/authenticators/recovery-codes'));
  if (answer === undefined) return app.render();
  if (answer.status !== 200) {
    app.state.errors = errorMessages(answer);
    return app.render();
  }
  // The prompt may have replaced the page: show the codes on a fresh one.
  if (!container.isConnected) await app.render();
  const codes = Array.isArray(answer.data?.unused_codes) ? answer.data.unused_codes : [];
  const target = container.isConnected ? container : document.getElementById('spa-recovery-codes');
  target?.replaceChildren(h('p', {}, 'Each code works once.'), h('ul', { class: 'codes' }, codes.map((code) => h('li', {}, h('code', {}, String(code))))));
  return undefined;
}

function activeView(app, ticket, authenticator, recovery) {
  const codes = h('div', { id: 'spa-recovery-codes' });
  app.mount(
    ticket,
    'Authenticator app',
    h('p', {}, 'Status: ', h('strong', { id: 'spa-totp-status' }, 'Active')),
    h('p', {}, `Activated ${formatTime(authenticator?.created_at)}. `, authenticator?.last_used_at ? `Last used ${formatTime(authenticator.last_used_at)}.` : 'Not used to sign in yet.'),
    recovery
      ? h('section', { class: 'section' }, h('h2', {}, 'Recovery codes'), h('p', { id: 'spa-recovery-unused' }, `${recovery.unused_code_count} of ${recovery.total_code_count} unused.`), actionButton('Show recovery codes', () => showRecoveryCodes(app, codes)), codes)
      : null,
    h('div', { class: 'actions' }, actionButton('Deactivate', () => change(app, () => call('DELETE', '/account/authenticators/totp'), 'Authenticator app deactivated.'), { class: 'button button-danger' })),
  );
}

export async function totpView(app, ticket) {
  app.loading(ticket);
  const answer = await call('GET', '/account/authenticators/totp');
  if (signedOut(answer)) return app.applyAuth(answer);
  if (answer.status === 404 && answer.meta?.secret) return activationView(app, ticket, answer.meta);
  if (answer.status === 200) {
    const list = await call('GET', '/account/authenticators');
    const recovery = list.status === 200 && Array.isArray(list.data) ? list.data.find((authenticator) => authenticator.type === 'recovery_codes') : undefined;
    return activeView(app, ticket, answer.data, recovery);
  }
  const reason = answer.status === 409 ? 'You must verify your email address before you can activate an authenticator app.' : errorMessages(answer).join(' ');
  app.mount(ticket, 'Authenticator app', h('p', { id: 'spa-totp-unavailable' }, reason), h('p', {}, h('a', { href: '#/account' }, 'Back to your account')));
  return undefined;
}
