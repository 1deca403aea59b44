import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { changePassword, setPassword } from '../../account/flows/password-change.js';
import { requestPasswordReset, resetKeyAccount, resetPasswordWithKey, userForResetKey } from '../../account/flows/password-reset.js';
import { isUsablePassword } from '../../account/passwords/index.js';
import { isLatchkeyError } from '../../core/errors.js';
import { msg } from '../../core/i18n/message.js';
import { emptyForm, refusalStatus, flash, formFields, formWithError, redirect, renderPage, requireUser } from './page.js';
import type { HttpContext } from '../kit/context.js';
import { clientOf, logMailFailures } from '../kit/request-info.js';
import { answeringWith } from '../kit/after-answer.js';

/** Session key holding a reset key between the mailed link and the form (as Django's and allauth's). */
const RESET_KEY_SESSION = '_password_reset_key';
const SET_PASSWORD_SUFFIX = '-set-password';

/**
 * The mailed key must never reach anyone in a Referer. Its URL answers only with a redirect (a
 * redirect's URL never becomes a Referer) or, for a key nobody can use, the invalid-link page; the
 * key moves into the session before the form is shown, so no page's URL carries it; and every
 * answer keeps Referers on this site (kit/referrer-policy.ts).
 */
function registerResetPages(scope: FastifyInstance, ctx: HttpContext): void {
  const { urls } = ctx.deps;
  /** The form's own URL for an account: the key itself stays in the session. */
  const formUrl = (account: string) => urls.urlFor('account_reset_password_from_key', { key: `${account}${SET_PASSWORD_SUFFIX}` });
  const requestForm = (request: FastifyRequest, reply: FastifyReply, form = emptyForm(), status = 200) =>
    renderPage(ctx, request, reply, 'account/password_reset.html', { title: msg('Password reset'), form }, status);

  scope.get(urls.route('account_reset_password'), (request, reply) => requestForm(request, reply));

  scope.post(urls.route('account_reset_password'), async (request, reply) => {
    const fields = formFields(request.body, ['email']);
    try {
      // The mail, which only an existing account gets, is neither awaited nor begun before the answer has gone.
      const { delivery } = await requestPasswordReset(answeringWith(ctx.deps, reply), { email: fields.email, client: clientOf(request) });
      void delivery.then((outcomes) => logMailFailures(request, outcomes, 'password reset'));
      return redirect(reply, urls.urlFor('account_reset_password_done'));
    } catch (error) {
      return requestForm(request, reply, formWithError({ email: fields.email }, error), refusalStatus(reply, error));
    }
  });

  scope.get(urls.route('account_reset_password_done'), (request, reply) => renderPage(ctx, request, reply, 'account/password_reset_done.html', { title: msg('Password reset') }));

  const invalidLink = (request: FastifyRequest, reply: FastifyReply, status = 200) =>
    renderPage(ctx, request, reply, 'account/password_reset_from_key.html', { title: msg('Bad token'), token_fail: true }, status);

  /** The key a form URL stands for: the one the session holds for that account (`<id>-set-password`), or the URL's own. */
  async function keyOf(request: FastifyRequest): Promise<{ key: string; fromSession: boolean }> {
    const { key } = request.params as { key: string };
    if (!key.endsWith(SET_PASSWORD_SUFFIX)) return { key, fromSession: false };
    const stored = (await ctx.sessions.session(request))?.data[RESET_KEY_SESSION];
    const matches = typeof stored === 'string' && resetKeyAccount(stored) === key.slice(0, -SET_PASSWORD_SUFFIX.length);
    return { key: matches ? stored : '', fromSession: true };
  }

  const keyForm = (request: FastifyRequest, reply: FastifyReply, account: string, form = emptyForm(), status = 200) =>
    renderPage(ctx, request, reply, 'account/password_reset_from_key.html', { title: msg('Change password'), form, action: formUrl(account) }, status);

  scope.get(urls.route('account_reset_password_from_key'), async (request, reply) => {
    const { key, fromSession } = await keyOf(request);
    const account = resetKeyAccount(key);
    if (account === undefined || !(await userForResetKey(ctx.deps, key))) return invalidLink(request, reply);
    if (fromSession) return keyForm(request, reply, account);
    // The key leaves the URL before any page with resources or links is shown (as Django does).
    const session = await ctx.sessions.ensureSession(request, reply);
    await ctx.deps.sessions.saveData(session, { ...session.data, [RESET_KEY_SESSION]: key });
    return redirect(reply, formUrl(account));
  });

  scope.post(urls.route('account_reset_password_from_key'), async (request, reply) => {
    const fields = formFields(request.body, ['password1', 'password2']);
    const { key } = await keyOf(request);
    try {
      const result = await resetPasswordWithKey(ctx.deps, { key, ...fields, client: clientOf(request) });
      logMailFailures(request, [result.notification], 'password reset notification');
      const session = await ctx.sessions.session(request);
      if (session) {
        const { [RESET_KEY_SESSION]: _used, ...rest } = session.data;
        await ctx.deps.sessions.saveData(session, rest);
      }
      return redirect(reply, urls.urlFor('account_reset_password_from_key_done'));
    } catch (error) {
      const account = resetKeyAccount(key);
      if (isLatchkeyError(error, 'invalid_key') || account === undefined) return invalidLink(request, reply, 400);
      return keyForm(request, reply, account, formWithError({}, error), refusalStatus(reply, error));
    }
  });

  scope.get(urls.route('account_reset_password_from_key_done'), (request, reply) => renderPage(ctx, request, reply, 'account/password_reset_from_key_done.html', { title: msg('Change password') }));
}

function registerChangePages(scope: FastifyInstance, ctx: HttpContext): void {
  const { urls } = ctx.deps;
  const changeForm = (request: FastifyRequest, reply: FastifyReply, form = emptyForm(), status = 200) =>
    renderPage(ctx, request, reply, 'account/password_change.html', { title: msg('Change password'), form }, status);
  const setForm = (request: FastifyRequest, reply: FastifyReply, form = emptyForm(), status = 200) =>
    renderPage(ctx, request, reply, 'account/password_set.html', { title: msg('Set password'), form }, status);

  scope.get(urls.route('account_change_password'), async (request, reply) => {
    const signedIn = await requireUser(ctx, request, reply);
    if ('response' in signedIn) return signedIn.response;
    return isUsablePassword(signedIn.user.password) ? changeForm(request, reply) : redirect(reply, urls.urlFor('account_set_password'));
  });

  scope.post(urls.route('account_change_password'), async (request, reply) => {
    const signedIn = await requireUser(ctx, request, reply);
    if ('response' in signedIn) return signedIn.response;
    if (!isUsablePassword(signedIn.user.password)) return redirect(reply, urls.urlFor('account_set_password'));
    const fields = formFields(request.body, ['oldpassword', 'password1', 'password2']);
    const currentSession = await ctx.sessions.session(request);
    try {
      const input = { user: signedIn.user, oldPassword: fields.oldpassword, password1: fields.password1, password2: fields.password2 };
      const result = await changePassword(ctx.deps, { ...input, client: clientOf(request), ...(currentSession ? { currentSession } : {}) });
      logMailFailures(request, [result.notification], 'password change notification');
    } catch (error) {
      return changeForm(request, reply, formWithError({}, error), refusalStatus(reply, error));
    }
    // Every other session has ended; this one gets a new id, so one stolen before the change is dead.
    await ctx.sessions.rotate(request, reply);
    await flash(ctx, request, reply, { level: 'success', text: msg('Password successfully changed.') });
    return redirect(reply, urls.urlFor('account_change_password'));
  });

  scope.get(urls.route('account_set_password'), async (request, reply) => {
    const signedIn = await requireUser(ctx, request, reply);
    if ('response' in signedIn) return signedIn.response;
    return isUsablePassword(signedIn.user.password) ? redirect(reply, urls.urlFor('account_change_password')) : setForm(request, reply);
  });

  scope.post(urls.route('account_set_password'), async (request, reply) => {
    const signedIn = await requireUser(ctx, request, reply);
    if ('response' in signedIn) return signedIn.response;
    if (isUsablePassword(signedIn.user.password)) return redirect(reply, urls.urlFor('account_change_password'));
    const fields = formFields(request.body, ['password1', 'password2']);
    const currentSession = await ctx.sessions.session(request);
    try {
      const input = { user: signedIn.user, ...fields, client: clientOf(request) };
      const result = await setPassword(ctx.deps, { ...input, ...(currentSession ? { currentSession } : {}) });
      logMailFailures(request, [result.notification], 'password set notification');
    } catch (error) {
      return setForm(request, reply, formWithError({}, error), refusalStatus(reply, error));
    }
    await ctx.sessions.rotate(request, reply);
    await flash(ctx, request, reply, { level: 'success', text: msg('Password successfully set.') });
    return redirect(reply, urls.urlFor('account_change_password'));
  });
}

/** Password reset (request, mailed key, new password), change and set, at allauth's paths. */
export function registerPasswordPages(scope: FastifyInstance, ctx: HttpContext): void {
  registerResetPages(scope, ctx);
  registerChangePages(scope, ctx);
}
