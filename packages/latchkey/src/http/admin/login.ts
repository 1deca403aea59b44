import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { mayEnterAdmin } from '../../admin/access.js';
import { loginToAdmin } from '../../admin/flows/admin-login.js';
import { isLatchkeyError } from '../../core/errors.js';
import { msg } from '../../core/i18n/message.js';
import { remembersLogin } from '../../login/remember.js';
import type { HttpContext } from '../kit/context.js';
import { emptyForm, formFields, formWithError, redirect, refusalStatus, renderPage, type FormState } from '../kit/html-page.js';
import { loginContextOf } from '../kit/login-context.js';
import { redirectTargetOr, safeRedirectOr } from '../kit/safe-redirect.js';
import { settleLogin } from '../kit/session-state.js';
import { stagePagePath } from '../kit/stage-pages.js';
import { signOut } from '../kit/sign-out.js';
import { forbidden } from './guard.js';

/**
 * A value for a query string as Django writes `next` (QueryDict.urlencode(safe='/')): slashes
 * stay. A path nested in another's `next` then carries no `%2F`, which the same-site check
 * refuses (kit/safe-redirect.ts) because a later decode could turn it into `//`.
 */
function queryValue(text: string): string {
  return encodeURIComponent(text).replaceAll('%2F', '/');
}

/**
 * `<admin>/login/` and `<admin>/logout/`. With ADMIN_FORCE_ALLAUTH (cookiecutter-django's
 * secure_admin_login) a visitor is sent to the account login instead, social sign-in and all,
 * with `next` the admin login's own path (account_login's `?next=/admin/login/%3Fnext%3D/admin/`),
 * and comes back through it; a signed-in user who is not active staff gets 403 there. Otherwise
 * the admin's own form, which still goes through the login pipeline.
 */
export function registerAdminLogin(scope: FastifyInstance, ctx: HttpContext): void {
  const { settings, urls } = ctx.deps;
  // Links carry URL_PREFIX; the routes are registered inside the plugin's prefixed scope.
  const root = urls.urlFor('admin:index');
  const loginPath = urls.urlFor('admin:login');
  // Where a login here goes on to, as the adapter's isSafeUrl allows (an account page's `next` alike).
  const nextOf = (value: unknown) => redirectTargetOr(ctx.deps.adapter, value, root);

  function form(request: FastifyRequest, reply: FastifyReply, next: string, state: FormState = emptyForm(), status = 200): Promise<FastifyReply> {
    const context = { title: msg('Log in'), form: state, next, admin_root: root, login_by_email: settings.USERNAME_TYPE === 'email' };
    return renderPage(ctx, request, reply, 'admin/login.html', context, status);
  }

  scope.get(urls.route('admin:login'), async (request, reply) => {
    const next = nextOf((request.query as Record<string, unknown>).next);
    const user = await ctx.sessions.currentUser(request);
    if (user && mayEnterAdmin(user)) return redirect(reply, next);
    if (settings.ADMIN_FORCE_ALLAUTH) {
      if (user) return forbidden(ctx, request, reply);
      // secure_admin_login: the account login comes back to this very request (Django's
      // get_full_path()), which sends staff on to `next`. Only a same-site `next` is carried
      // along: any other is dropped here, as this page would drop it on the way back.
      const given = safeRedirectOr((request.query as Record<string, unknown>).next, undefined);
      const ownPath = given === undefined ? loginPath : `${loginPath}?next=${queryValue(given)}`;
      return redirect(reply, `${urls.urlFor('account_login')}?next=${queryValue(ownPath)}`);
    }
    const notStaff = user && msg('You are signed in as {user}, but are not authorized to access this page. Would you like to sign in to a different account?', { user: user.username ?? user.email });
    return form(request, reply, next, { values: {}, errors: notStaff ? { __all__: [notStaff] } : {} });
  });

  scope.post(urls.route('admin:login'), async (request, reply) => {
    // Forced through the account login: this form does not exist.
    if (settings.ADMIN_FORCE_ALLAUTH) return redirect(reply, loginPath);
    const fields = formFields(request.body, ['username', 'password', 'next']);
    const next = nextOf(fields.next);
    try {
      const result = await loginToAdmin(ctx.deps, { login: fields.username, password: fields.password, ...loginContextOf(ctx, request) });
      const outcome = await settleLogin(ctx, request, reply, result, { remember: remembersLogin(settings), next });
      if (outcome.kind === 'signed_in') return redirect(reply, next);
      // A stopped login carries on at the account pages' page for its stage, then goes on to `next`.
      const stagePage = outcome.kind === 'stopped' ? stagePagePath(ctx, outcome.stage) : undefined;
      if (stagePage !== undefined) return redirect(reply, stagePage);
      const why = outcome.kind === 'stopped' ? msg('Verify your email address first: follow the link we have sent you.') : msg('This account is inactive.');
      return await form(request, reply, next, { values: { username: fields.username }, errors: { __all__: [why] } }, 400);
    } catch (error) {
      if (!isLatchkeyError(error)) throw error;
      // A field left empty is refused on its field (the flow calls the identifier `login`).
      const shown = formWithError({ username: fields.username }, error);
      const errors = Object.fromEntries(Object.entries(shown.errors).map(([name, messages]) => [name === 'login' ? 'username' : name, messages]));
      return form(request, reply, next, { values: shown.values, errors }, refusalStatus(reply, error));
    }
  });

  // POST only, as Django 5's admin: a link or an image elsewhere must not sign anyone out.
  scope.post(urls.route('admin:logout'), async (request, reply) => {
    await signOut(ctx, request, reply);
    return redirect(reply, loginPath);
  });
}
