import type { FastifyInstance } from 'fastify';
import { signup } from '../../account/flows/signup.js';
import { isLatchkeyError } from '../../core/errors.js';
import { msg, type Message } from '../../core/i18n/message.js';
import { remembersLogin } from '../../login/remember.js';
import type { HttpContext } from '../kit/context.js';
import { clientOf } from '../kit/request-info.js';
import { SIGNUP_FORM_NAMES, signupFormFields, submittedFields, typedAgain } from '../kit/signup-fields.js';
import { userFieldsFromForm } from '../kit/user-field-form.js';
import { redirectTargetOr } from '../kit/safe-redirect.js';
import { settleSignup } from '../kit/session-state.js';
import { presentLogin } from './login-outcome.js';
import { providerLinks } from './socialaccount.js';
import { emptyForm, refusalStatus, flash, formFields, formWithError, redirect, renderPage, signedInLanding } from './page.js';

export function mailFailedMessage(email: string): Message {
  return msg('We could not send an email to {email} just now. Please try again later: signing in will send the verification email again.', { email });
}

export function registerSignupPages(scope: FastifyInstance, ctx: HttpContext): void {
  const context = async (next: string) => ({
    title: msg('Sign up'),
    signup_fields: signupFormFields(ctx.deps.settings, ctx.deps.userFields, { passwords: true }),
    passkey_signup: ctx.deps.settings.MFA_PASSKEY_SIGNUP_ENABLED,
    next,
    providers: await providerLinks(ctx),
  });
  const closed = { title: msg('Sign up closed') };
  const page = ctx.deps.urls.route('account_signup');

  scope.get(page, async (request, reply) => {
    const next = redirectTargetOr(ctx.deps.adapter, (request.query as Record<string, unknown>).next, '');
    const landing = await signedInLanding(ctx, request, next);
    if (landing !== undefined) return redirect(reply, landing);
    if (!(await ctx.deps.adapter.isOpenForSignup())) return renderPage(ctx, request, reply, 'account/signup_closed.html', closed);
    return renderPage(ctx, request, reply, 'account/signup.html', { ...(await context(next)), form: emptyForm() });
  });

  scope.post(page, async (request, reply) => {
    // Only the named fields are read: anything else a client adds (is_staff, email_verified) is ignored.
    const fields = formFields(request.body, SIGNUP_FORM_NAMES);
    const next = redirectTargetOr(ctx.deps.adapter, fields.next, '');
    const landing = await signedInLanding(ctx, request, next);
    if (landing !== undefined) return redirect(reply, landing);
    const client = clientOf(request);
    try {
      const result = await signup(ctx.deps, { ...fields, userFields: userFieldsFromForm(ctx.deps.userFields, request.body), client, submitted: submittedFields(request.body) });
      const outcome = await settleSignup(ctx, request, reply, result, { remember: remembersLogin(ctx.deps.settings), next });
      if (result.status === 'verification_sent') {
        // Word for word what a new signup and an address that already has an account both get.
        const text = result.mailFailed ? mailFailedMessage(result.email) : msg('We have sent an email to {email} for verification.', { email: result.email });
        await flash(ctx, request, reply, { level: result.mailFailed ? 'error' : 'info', text });
      } else if (result.mailFailed) {
        await flash(ctx, request, reply, { level: 'warning', text: msg('We could not send the verification email to {email} just now. You can send it again from your email page.', { email: result.user.email }) });
      } else if (result.verificationSent) {
        await flash(ctx, request, reply, { level: 'info', text: msg('We have sent an email to {email} for verification. Please follow the link in it.', { email: result.user.email }) });
      }
      return await presentLogin(ctx, request, reply, outcome, next);
    } catch (error) {
      if (!isLatchkeyError(error)) throw error;
      if (error.code === 'signup_closed') return renderPage(ctx, request, reply, 'account/signup_closed.html', closed, 403);
      const form = formWithError({ ...typedAgain(request.body), email: fields.email, email2: fields.email2, username: fields.username, name: fields.name }, error);
      return renderPage(ctx, request, reply, 'account/signup.html', { ...(await context(next)), form }, refusalStatus(reply, error));
    }
  });
}
