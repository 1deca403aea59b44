/**
 * A signed-in person's security keys and passkeys (`#/account/keys`): the list (name, passkey or
 * not, added, last used), adding one (a name, and a passkey box where passkeys sign in alone),
 * renaming and removing. Adding and removing need a recent proof of identity, which
 * `app.withReauthentication` asks for (the password, a code, or another key). The first key comes
 * with recovery codes, as an authenticator app does.
 */
import { call, errorMessages } from './api.js';
import { change, formatTime, showRecoveryCodes, signedOut } from './account-views.js';
import { actionButton, form, h } from './dom.js';
import { passkeyLoginEnabled } from './passkey-views.js';
import { CeremonyError, createCredential } from './webauthn.js';

const KEYS = '/account/authenticators/webauthn';

/**
 * The creation options (`?passwordless` asks for a passkey: present at all, whatever its value,
 * as allauth reads it), the browser's new credential, and the credential posted with its name.
 * Returns the messages for the form while the form is still on the page; once a prompt has
 * replaced it, shows them on the view instead.
 */
async function addKey(app, { name, passkey }) {
  const { answer: options, prompted } = await app.withReauthentication(() => call('GET', passkey ? `${KEYS}?passwordless` : KEYS));
  if (options === undefined) return void (await app.render());
  const fail = async (messages) => {
    if (!prompted) return messages;
    app.state.errors = messages;
    return void (await app.render());
  };
  if (signedOut(options)) return void (await app.applyAuth(options));
  if (options.status === 409) return fail(['Verify your email address before you add a security key.']);
  if (options.status !== 200) return fail(errorMessages(options));
  let credential;
  try {
    credential = await createCredential(options.data?.creation_options ?? {});
  } catch (error) {
    return fail([error instanceof CeremonyError ? error.message : 'Something went wrong with the security key. Please try again.']);
  }
  const answer = await call('POST', KEYS, { body: { name, credential } });
  if (answer.status === 200) {
    app.state.messages.push(passkey ? 'Passkey added.' : 'Security key added.');
    if (answer.meta?.recovery_codes_generated) app.state.messages.push('Recovery codes were made for you: show them below and keep them somewhere safe.');
    return void (await app.render());
  }
  if (signedOut(answer)) return void (await app.applyAuth(answer));
  return fail(errorMessages(answer));
}

/** The form that renames `key`, shown in `slot` under the table. */
function renameForm(app, key, slot) {
  const name = String(key.name ?? '');
  return form({
    name: `Rename ${name}`,
    fields: [{ name: 'name', label: `New name for ${name}`, value: name, autocomplete: 'off' }],
    submitLabel: 'Save name',
    onSubmit: (values) => change(app, () => call('PUT', KEYS, { body: { id: key.id, name: values.name } }), `Renamed ${name} to ${values.name}.`, true),
    after: actionButton('Cancel', () => Promise.resolve(void slot.replaceChildren())),
  });
}

function keyRow(app, key, slot) {
  const name = String(key.name ?? '');
  const rename = actionButton(
    'Rename',
    () => {
      slot.replaceChildren(renameForm(app, key, slot));
      slot.querySelector('input')?.focus();
      return Promise.resolve();
    },
    { 'aria-label': `Rename ${name}` },
  );
  const remove = actionButton('Remove', () => change(app, () => call('DELETE', KEYS, { body: { authenticators: [key.id] } }), `Removed ${name}.`), { 'aria-label': `Remove ${name}` });
  return h(
    'tr',
    {},
    h('td', {}, name),
    // Short values wrap between words only, so that the name (the person's own text) takes the squeeze.
    h('td', { class: 'words' }, key.is_passwordless ? 'Passkey' : 'Security key'),
    h('td', { class: 'words' }, formatTime(key.created_at)),
    h('td', { class: 'words' }, key.last_used_at ? formatTime(key.last_used_at) : 'Not used yet'),
    h('td', {}, h('div', { class: 'actions' }, rename, remove)),
  );
}

export async function keysView(app, ticket) {
  app.loading(ticket);
  const answer = await call('GET', '/account/authenticators');
  if (signedOut(answer)) return app.applyAuth(answer);
  const authenticators = answer.status === 200 && Array.isArray(answer.data) ? answer.data : [];
  const keys = authenticators.filter((authenticator) => authenticator.type === 'webauthn');
  const recovery = authenticators.find((authenticator) => authenticator.type === 'recovery_codes');
  const slot = h('div', { id: 'spa-key-rename' });
  let list;
  if (answer.status !== 200) list = h('p', { role: 'alert' }, ...errorMessages(answer));
  else if (keys.length === 0) list = h('p', { id: 'spa-no-keys' }, 'You have no security keys or passkeys yet.');
  else {
    list = h(
      'table',
      { class: 'table', id: 'spa-keys' },
      h('thead', {}, h('tr', {}, h('th', {}, 'Name'), h('th', {}, 'Kind'), h('th', {}, 'Added'), h('th', {}, 'Last used'), h('th', {}, 'Actions'))),
      h('tbody', {}, keys.map((key) => keyRow(app, key, slot))),
    );
  }
  const fields = [{ name: 'name', label: 'Name', autocomplete: 'off' }];
  if (passkeyLoginEnabled(app)) fields.push({ name: 'passkey', label: 'A passkey: it signs in alone, without a password', type: 'checkbox' });
  const add = form({ name: 'Add a security key', fields, submitLabel: 'Add security key', onSubmit: (values) => addKey(app, { name: values.name, passkey: values.passkey === 'on' }) });
  const codes = h('div', { id: 'spa-recovery-codes' });
  app.mount(
    ticket,
    'Security keys',
    h('p', {}, 'A security key or a passkey (this device, your phone, a USB key) proves it is you after your password.', passkeyLoginEnabled(app) ? ' A passkey also signs you in by itself.' : ''),
    list,
    slot,
    h('section', { class: 'section', 'aria-labelledby': 'spa-add-key-heading' }, h('h2', { id: 'spa-add-key-heading' }, 'Add a security key'), add),
    recovery
      ? h('section', { class: 'section' }, h('h2', {}, 'Recovery codes'), h('p', { id: 'spa-recovery-unused' }, `${recovery.unused_code_count} of ${recovery.total_code_count} unused.`), actionButton('Show recovery codes', () => showRecoveryCodes(app, codes)), codes)
      : null,
  );
  return undefined;
}
