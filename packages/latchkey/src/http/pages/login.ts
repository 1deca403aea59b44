import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { loginWithPassword, recordLogin, type LoginResult } from '../../account/flows/login.js';
import { isLatchkeyError } from '../../core/errors.js';
import { loginRecords } from '../kit/authentication-records.js';
import { safeRedirectOr } from '../kit/safe-redirect.js';
import { emptyForm, flash, formFields, redirect, refusalStatus, renderPage, type PageDeps } from './page.js';
import { clientOf } from '../kit/request-info.js';
import { clearPendingLogin, startPendingLogin } from '../kit/pending-login.js';
import { MFA_AUTHENTICATE } from './mfa-authenticate.js';
import { mfaTrustTokenOf } from '../kit/mfa-trust-cookie.js';

function rememberChoice(page: PageDeps, submitted: string): boolean {
  const setting = page.deps.settings.ACCOUNT_SESSION_REMEMBER;
  return setting ?? (submitted === 'on' || submitted === 'true' || submitted === '1');
}

/** After a successful credentials stage: the new session, the event, and the way on. */
export async function finishLogin(
  page: PageDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  result: LoginResult,
  options: { remember: boolean; next: string },
): Promise<FastifyReply> {
  if (result.status === 'inactive') {
    await clearPendingLogin(page, request);
    return redirect(reply, '/accounts/inactive/');
  }
  if (result.status === 'stopped') {
    await startPendingLogin(page, request, reply, { login: result.pending, stage: result.stage, remember: options.remember, next: options.next });
    if (result.stage === 'mfa_authenticate') return redirect(reply, MFA_AUTHENTICATE);
    return renderPage(page, request, reply, 'account/verification_sent.html', { title: 'Verify your email address' });
  }
  await clearPendingLogin(page, request);
  const authentications = loginRecords(page.deps.settings, result.user, result.method, page.deps.clock.now());
  await page.sessions.login(request, reply, result.user, { remember: options.remember, authentications });
  await recordLogin(page.deps, result.user, clientOf(request), result.method);
  await flash(page, request, reply, { level: 'success', text: `Successfully signed in as ${result.user.username ?? result.user.email}.` });
  return redirect(reply, safeRedirectOr(options.next, page.deps.settings.LOGIN_REDIRECT_URL));
}

export function registerLoginPages(scope: FastifyInstance, page: PageDeps): void {
  const loginContext = (next: string) => ({
    title: 'Sign in',
    login_by_email: page.deps.settings.USERNAME_TYPE === 'email',
    ask_remember: page.deps.settings.ACCOUNT_SESSION_REMEMBER === null,
    next,
  });

  scope.get('/accounts/login/', async (request, reply) => {
    const next = safeRedirectOr((request.query as Record<string, unknown>).next, '');
    if (await page.sessions.currentUser(request)) return redirect(reply, next || page.deps.settings.LOGIN_REDIRECT_URL);
    return renderPage(page, request, reply, 'account/login.html', { ...loginContext(next), form: emptyForm() });
  });

  scope.post('/accounts/login/', async (request, reply) => {
    const fields = formFields(request.body, ['login', 'password', 'remember', 'next']);
    const next = safeRedirectOr(fields.next, '');
    try {
      const result = await loginWithPassword(page.deps, {
        login: fields.login,
        password: fields.password,
        client: clientOf(request),
        mfaTrustToken: mfaTrustTokenOf(request),
      });
      return await finishLogin(page, request, reply, result, { remember: rememberChoice(page, fields.remember), next });
    } catch (error) {
      if (!isLatchkeyError(error)) throw error;
      const form = { values: { login: fields.login }, errors: { __all__: [error.message] } };
      return renderPage(page, request, reply, 'account/login.html', { ...loginContext(next), form }, refusalStatus(reply, error));
    }
  });

  scope.get('/accounts/inactive/', (request, reply) => renderPage(page, request, reply, 'account/account_inactive.html', { title: 'Account inactive' }));

  // A GET only asks: following a link (or an <img> on another site) must not sign anyone out.
  scope.get('/accounts/logout/', async (request, reply) => {
    if (!(await page.sessions.currentUser(request))) return redirect(reply, page.deps.settings.LOGOUT_REDIRECT_URL);
    return renderPage(page, request, reply, 'account/logout.html', { title: 'Sign out' });
  });

  scope.post('/accounts/logout/', async (request, reply) => {
    const user = await page.sessions.currentUser(request);
    await page.sessions.logout(request, reply);
    if (user) {
      await page.deps.events.emit('user_logged_out', user.id, clientOf(request));
      await flash(page, request, reply, { level: 'info', text: 'You have signed out.' });
    }
    return redirect(reply, page.deps.settings.LOGOUT_REDIRECT_URL);
  });
}
