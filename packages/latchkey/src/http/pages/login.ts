import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { loginWithPassword } from '../../login/password.js';
import { remembersLogin } from '../../login/remember.js';
import { isLatchkeyError } from '../../core/errors.js';
import { msg } from '../../core/i18n/message.js';
import type { HttpContext } from '../kit/context.js';
import { loginContextOf } from '../kit/login-context.js';
import { redirectTargetOr } from '../kit/safe-redirect.js';
import { settleLogin } from '../kit/session-state.js';
import { signOut } from '../kit/sign-out.js';
import { presentLogin } from './login-outcome.js';
import { emptyForm, flash, formFields, formWithError, redirect, refusalStatus, renderPage, type FormState, signedInLanding } from './page.js';
import { providerLinks } from './socialaccount.js';

/** The "remember me" box as a browser (or a test) submits it: absent when unticked. */
function ticked(submitted: string): boolean {
  return submitted === 'on' || submitted === 'true' || submitted === '1';
}

/**
 * What the login field asks for, as allauth labels it: an address where only addresses sign in
 * (an email project, or ACCOUNT_LOGIN_METHODS=email), a username where only usernames do, else
 * either.
 */
function loginFieldOf(settings: HttpContext['deps']['settings']): 'email' | 'username' | 'either' {
  const methods = settings.ACCOUNT_LOGIN_METHODS;
  if (settings.USERNAME_TYPE === 'email' || !methods.includes('username')) return 'email';
  return methods.includes('email') ? 'either' : 'username';
}

/**
 * The login page, with the form's state: also shown by the passkey login (passkey-login.ts) when
 * a passkey is refused, its error under the passkey's button.
 */
export async function renderLoginPage(ctx: HttpContext, request: FastifyRequest, reply: FastifyReply, next: string, form: FormState = emptyForm(), status = 200): Promise<FastifyReply> {
  const { settings } = ctx.deps;
  return renderPage(ctx, request, reply, 'account/login.html', {
    title: msg('Sign in'),
    login_field: loginFieldOf(settings),
    ask_remember: settings.ACCOUNT_SESSION_REMEMBER === null,
    login_by_code: settings.ACCOUNT_LOGIN_BY_CODE_ENABLED,
    passkey_login: settings.MFA_PASSKEY_LOGIN_ENABLED,
    next,
    // The providers people can sign in with: links to each provider's page, whose button starts it.
    providers: await providerLinks(ctx),
    form,
  }, status);
}

export function registerLoginPages(scope: FastifyInstance, ctx: HttpContext): void {
  const { urls } = ctx.deps;
  scope.get(urls.route('account_login'), async (request, reply) => {
    const next = redirectTargetOr(ctx.deps.adapter, (request.query as Record<string, unknown>).next, '');
    const landing = await signedInLanding(ctx, request, next);
    if (landing !== undefined) return redirect(reply, landing);
    return renderLoginPage(ctx, request, reply, next);
  });

  scope.post(urls.route('account_login'), async (request, reply) => {
    const fields = formFields(request.body, ['login', 'password', 'remember', 'next']);
    const next = redirectTargetOr(ctx.deps.adapter, fields.next, '');
    try {
      const result = await loginWithPassword(ctx.deps, { login: fields.login, password: fields.password, ...loginContextOf(ctx, request) });
      const outcome = await settleLogin(ctx, request, reply, result, { remember: remembersLogin(ctx.deps.settings, ticked(fields.remember)), next });
      return await presentLogin(ctx, request, reply, outcome, next);
    } catch (error) {
      if (!isLatchkeyError(error)) throw error;
      // A field left empty is refused on its field; wrong credentials on the form as a whole.
      const form = error.param === undefined ? { values: { login: fields.login }, errors: { __all__: [error.text] } } : formWithError({ login: fields.login }, error);
      return renderLoginPage(ctx, request, reply, next, form, refusalStatus(reply, error));
    }
  });

  // The default of getInactiveAccountUrl, where login-outcome.ts sends an inactive account's login.
  // When the project names a page of its own, whoever still comes here is sent on there.
  scope.get(urls.route('account_inactive'), (request, reply) => {
    const elsewhere = ctx.deps.adapter.getInactiveAccountUrl();
    if (elsewhere !== urls.urlFor('account_inactive')) return redirect(reply, elsewhere);
    return renderPage(ctx, request, reply, 'account/account_inactive.html', { title: msg('Account inactive') });
  });

  // A GET only asks: following a link (or an <img> on another site) must not sign anyone out.
  scope.get(urls.route('account_logout'), async (request, reply) => {
    if (!(await ctx.sessions.currentUser(request))) return redirect(reply, ctx.deps.adapter.getLogoutRedirectUrl());
    return renderPage(ctx, request, reply, 'account/logout.html', { title: msg('Sign out') });
  });

  scope.post(urls.route('account_logout'), async (request, reply) => {
    if (await signOut(ctx, request, reply)) await flash(ctx, request, reply, { level: 'info', text: msg('You have signed out.') });
    return redirect(reply, ctx.deps.adapter.getLogoutRedirectUrl());
  });
}
