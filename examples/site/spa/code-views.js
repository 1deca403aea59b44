/**
 * Mailed codes: signing in with a code instead of a password (config's
 * `account.login_by_code_enabled`), and confirming an address with a code instead of a link
 * (`account.email_verification_by_code_enabled`). Each code is bound to this browser's session:
 * the API remembers which address asked, so the app sends only the code.
 */
import { call, errorMessages, isSessionAnswer } from './api.js';
import { actionButton, form, h } from './dom.js';

/** Whether the site signs people in with a mailed code. */
export function loginByCodeEnabled(app) {
  return app.state.config?.account?.login_by_code_enabled === true;
}

/** Whether the site confirms addresses with a mailed code rather than a link. */
export function verificationByCodeEnabled(app) {
  return app.state.config?.account?.email_verification_by_code_enabled === true;
}

/** The login view's way to a code: a link, when the site offers it. */
export function loginCodeLink(app) {
  if (!loginByCodeEnabled(app)) return null;
  return h('p', {}, h('a', { href: '#/login/code', id: 'spa-login-code-link' }, 'Mail me a sign-in code'), ' instead of using a password.');
}

/**
 * "Mail me a sign-in code": the address, then the code step. The API answers alike whether or
 * not the address has an account (nobody learns who has one), so the app always goes on to the
 * code step the answer says is pending.
 */
export function requestLoginCodeView(app, ticket) {
  const request = form({
    name: 'Mail me a sign-in code',
    fields: [{ name: 'email', label: 'Email', type: 'email', autocomplete: 'email' }],
    submitLabel: 'Request code',
    async onSubmit({ email }) {
      const answer = await call('POST', '/auth/code/request', { body: { email } });
      if (isSessionAnswer(answer)) {
        app.state.messages.push(`If ${email} has an account here, a sign-in code is on its way.`);
        return void (await app.applyAuth(answer));
      }
      if (answer.status === 409) return void (await app.refreshSession());
      return errorMessages(answer);
    },
  });
  app.mount(
    ticket,
    'Mail me a sign-in code',
    h('p', {}, 'You will receive an email with a code to sign in with, no password needed.'),
    request,
    h('p', {}, h('a', { href: '#/login' }, 'Sign in with a password'), ' instead.'),
  );
}

/**
 * The code step of a login by code (the pending `login_by_code` flow), also asked after a
 * password where the site requires it. A wrong code is refused with the API's message; too many
 * wrong codes, or an expired one, end the login (409 on the next try).
 */
export function confirmLoginCodeView(app, ticket) {
  const confirm = form({
    name: 'Enter your sign-in code',
    fields: [{ name: 'code', label: 'Code', autocomplete: 'one-time-code' }],
    submitLabel: 'Sign in',
    async onSubmit({ code }) {
      const answer = await call('POST', '/auth/code/confirm', { body: { code } });
      if (isSessionAnswer(answer)) return void (await app.applyAuth(answer));
      if (answer.status === 409) {
        app.state.errors.push('This sign-in code has expired or was used up. Please request a new one.');
        return void (await app.refreshSession());
      }
      return errorMessages(answer);
    },
  });
  app.mount(
    ticket,
    'Enter your sign-in code',
    h('p', { id: 'spa-login-code-sent' }, 'We have emailed you a code. Enter it below to sign in; it works for a few minutes only.'),
    confirm,
    h('p', {}, h('a', { href: '#/login' }, 'Sign in another way'), '.'),
  );
}

/**
 * The step after a signup (or a login) under mandatory verification, when the site mails a code:
 * the code confirms the address and the login goes on from the API's answer (signed in, the next
 * step, or back to signing in). 401 is no failure here: the address is confirmed.
 */
export function verifyEmailCodeView(app, ticket) {
  const verify = form({
    name: 'Verify your email address',
    fields: [{ name: 'code', label: 'Code', autocomplete: 'one-time-code' }],
    submitLabel: 'Confirm',
    async onSubmit({ code }) {
      const answer = await call('POST', '/auth/email/verify', { body: { key: code } });
      if (isSessionAnswer(answer)) {
        app.state.messages.push('You have confirmed your email address.');
        return void (await app.applyAuth(answer));
      }
      if (answer.status === 409) return void (await app.refreshSession());
      return errorMessages(answer);
    },
  });
  const resend = actionButton('Send a new code', async () => {
    const answer = await call('POST', '/auth/email/verify/resend');
    if (answer.status === 200) app.state.messages.push('A new code is on its way.');
    else if (answer.status === 409) return void (await app.refreshSession());
    else app.state.errors = errorMessages(answer);
    return void (await app.render());
  });
  app.mount(
    ticket,
    'Verify your email address',
    h('p', { id: 'spa-verify-email-code' }, 'We have emailed you a code to verify your address. Enter it below to finish.'),
    verify,
    h('div', { class: 'actions' }, resend),
    h('p', {}, h('a', { href: '#/login' }, 'Sign in'), ' with another account, or ', h('a', { href: '#/signup' }, 'sign up'), ' again.'),
  );
}

/**
 * For a signed-in person who added an address, when the site mails codes: the code from that
 * mail confirms it (`POST auth/email/verify`, as during a signup). Shown under the address table
 * while an address is unverified.
 */
export function addressCodeForm(app) {
  return form({
    name: 'Confirm an address with its code',
    fields: [{ name: 'code', label: 'Code from the email', autocomplete: 'one-time-code' }],
    submitLabel: 'Confirm address',
    async onSubmit({ code }) {
      const answer = await call('POST', '/auth/email/verify', { body: { key: code } });
      if (answer.status === 200) {
        app.state.messages.push('You have confirmed the address.');
        return void (await app.render());
      }
      if (answer.status === 409) return ['No confirmation is waiting in this browser: send the code again, then enter the new one.'];
      return errorMessages(answer);
    },
  });
}
