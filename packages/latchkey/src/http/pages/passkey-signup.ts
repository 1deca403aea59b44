import type { RegistrationResponseJSON } from '@simplewebauthn/server';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { beginPasskeySignup, completePasskeySignup, passkeySignupOptions } from '../../account/flows/passkey-signup.js';
import { isLatchkeyError } from '../../core/errors.js';
import { msg } from '../../core/i18n/message.js';
import { remembersLogin } from '../../login/remember.js';
import type { HttpContext } from '../kit/context.js';
import { loginContextOf } from '../kit/login-context.js';
import { clientOf } from '../kit/request-info.js';
import { SIGNUP_FORM_NAMES, signupFormFields, submittedFields, typedAgain } from '../kit/signup-fields.js';
import { userFieldsFromForm } from '../kit/user-field-form.js';
import { redirectTargetOr } from '../kit/safe-redirect.js';
import { loginWaitingAt, settleLogin, settleSignup, type PendingLogin } from '../kit/session-state.js';
import { credentialOfField, takeWebauthnCeremony } from '../kit/webauthn-ceremony.js';
import { presentLogin } from './login-outcome.js';
import { emptyForm, flash, formFields, formWithError, redirect, refusalStatus, renderPage, type FormState, signedInLanding } from './page.js';
import { mailFailedMessage } from './signup.js';
import { sendOptions, sendOptionsElsewhere, sendOptionsRefusal, wantsOptions } from './webauthn-options.js';

/**
 * Passkey signup (MFA_PASSKEY_SIGNUP_ENABLED), allauth's two pages:
 * - /accounts/signup/passkey/ (allauth's signup_by_passkey): the signup form without a password;
 *   the new account's login then waits for the mailed code at /accounts/confirm-email/, as any
 *   signup under verification by code;
 * - /accounts/2fa/webauthn/signup/ (allauth's mfa_signup_webauthn): once the address is verified,
 *   the browser makes the account's passkey, which signs the person in.
 * The flow (account/flows/passkey-signup.ts) holds every rule; without the setting neither page exists.
 */
export function registerPasskeySignupPages(scope: FastifyInstance, ctx: HttpContext): void {
  const { urls } = ctx.deps;
  const nextOfQuery = (request: FastifyRequest) => redirectTargetOr(ctx.deps.adapter, (request.query as Record<string, unknown>).next, '');
  const closed = { title: msg('Sign up closed') };
  const showForm = (request: FastifyRequest, reply: FastifyReply, next: string, form: FormState = emptyForm(), status = 200) =>
    renderPage(ctx, request, reply, 'account/signup_by_passkey.html', { title: msg('Sign up with a passkey'), signup_fields: signupFormFields(ctx.deps.settings, ctx.deps.userFields, { passwords: false }), next, form }, status);

  scope.get(urls.route('account_signup_by_passkey'), async (request, reply) => {
    const next = nextOfQuery(request);
    const landing = await signedInLanding(ctx, request, next);
    if (landing !== undefined) return redirect(reply, landing);
    if (!(await ctx.deps.adapter.isOpenForSignup())) return renderPage(ctx, request, reply, 'account/signup_closed.html', closed);
    return showForm(request, reply, next);
  });

  scope.post(urls.route('account_signup_by_passkey'), async (request, reply) => {
    const fields = formFields(request.body, SIGNUP_FORM_NAMES);
    const next = redirectTargetOr(ctx.deps.adapter, fields.next, '');
    const landing = await signedInLanding(ctx, request, next);
    if (landing !== undefined) return redirect(reply, landing);
    try {
      const result = await beginPasskeySignup(ctx.deps, { email: fields.email, email2: fields.email2, username: fields.username, name: fields.name, userFields: userFieldsFromForm(ctx.deps.userFields, request.body), client: clientOf(request), submitted: submittedFields(request.body) });
      const outcome = await settleSignup(ctx, request, reply, result, { remember: remembersLogin(ctx.deps.settings), next });
      if (result.status === 'verification_sent') {
        // Word for word what a new signup and an address that already has an account both get.
        const text = result.mailFailed ? mailFailedMessage(result.email) : msg('We have sent an email to {email} for verification.', { email: result.email });
        await flash(ctx, request, reply, { level: result.mailFailed ? 'error' : 'info', text });
      }
      return await presentLogin(ctx, request, reply, outcome, next);
    } catch (error) {
      if (!isLatchkeyError(error)) throw error;
      if (error.code === 'signup_closed') return renderPage(ctx, request, reply, 'account/signup_closed.html', closed, 403);
      return showForm(request, reply, next, formWithError({ ...typedAgain(request.body), email: fields.email, email2: fields.email2, username: fields.username, name: fields.name }, error), refusalStatus(reply, error));
    }
  });

  const showPasskeyStep = (request: FastifyRequest, reply: FastifyReply, form: FormState = emptyForm(), status = 200) =>
    renderPage(ctx, request, reply, 'mfa/webauthn/signup_form.html', { title: msg('Create your passkey'), form }, status);

  /** The browser's signup waiting for its passkey, or undefined (such a browser is sent to sign up). */
  const waitingSignup = (request: FastifyRequest): Promise<PendingLogin | undefined> => loginWaitingAt(ctx, request, 'mfa_signup_webauthn');

  scope.get(urls.route('mfa_signup_webauthn'), async (request, reply) => {
    const pending = await waitingSignup(request);
    if (wantsOptions(request)) {
      if (!pending) return sendOptionsElsewhere(reply, urls.urlFor('account_signup_by_passkey'));
      try {
        return await sendOptions(ctx, request, reply, 'creation_options', await passkeySignupOptions(ctx.deps, pending.login));
      } catch (error) {
        return sendOptionsRefusal(ctx, request, reply, error);
      }
    }
    if (!pending) return redirect(reply, urls.urlFor('account_signup_by_passkey'));
    return showPasskeyStep(request, reply);
  });

  scope.post(urls.route('mfa_signup_webauthn'), async (request, reply) => {
    const pending = await waitingSignup(request);
    if (!pending) return redirect(reply, urls.urlFor('account_login'));
    const fields = formFields(request.body, ['name', 'credential']);
    let result;
    try {
      const credential = credentialOfField(fields.credential) as unknown as RegistrationResponseJSON;
      const answer = { ceremony: await takeWebauthnCeremony(ctx, request, 'register'), credential, name: fields.name };
      result = await completePasskeySignup(ctx.deps, pending.login, answer, loginContextOf(ctx, request));
    } catch (error) {
      return showPasskeyStep(request, reply, formWithError({ name: fields.name }, error), refusalStatus(reply, error));
    }
    const outcome = await settleLogin(ctx, request, reply, result, { remember: pending.remember, next: pending.next });
    return presentLogin(ctx, request, reply, outcome, pending.next);
  });
}
