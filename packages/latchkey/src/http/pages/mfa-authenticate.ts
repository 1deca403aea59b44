import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { continueLogin } from '../../login/pipeline.js';
import { hasMfaEnabled } from '../../mfa/authenticators.js';
import { reauthenticateWithCode } from '../../mfa/flows/authenticate.js';
import { codeRecord } from '../kit/authentication-records.js';
import type { HttpContext } from '../kit/context.js';
import { loginContextOf } from '../kit/login-context.js';
import { clientOf } from '../kit/request-info.js';
import { safeRedirectOr } from '../kit/safe-redirect.js';
import { loginWaitingAt, settleLogin } from '../kit/session-state.js';
import { LOGIN_PAGE, MFA_AUTHENTICATE_PAGE, presentLogin } from './login-outcome.js';
import { emptyForm, formFields, formWithError, redirect, refusalStatus, renderPage, requireUser, type FormState } from './page.js';

/** "14 days", "1 day", "12 hours", "1 minute": the trust period as the checkbox states it. */
export function describeDuration(seconds: number): string {
  const [count, unit] = seconds >= 86400 ? [Math.round(seconds / 86400), 'day'] : seconds >= 3600 ? [Math.round(seconds / 3600), 'hour'] : [Math.max(1, Math.round(seconds / 60)), 'minute'];
  return `${count} ${unit}${count === 1 ? '' : 's'}`;
}

/**
 * The login's second step, and reauthentication by code. The code page serves only a browser
 * whose login stopped at this stage and has not expired (kit/session-state.ts); anyone else is
 * sent to the login page. Until the code is right there is no session of the user at all, so
 * every page that needs one answers as to a stranger, and a stolen password alone reaches nothing.
 */
export function registerMfaAuthenticationPages(scope: FastifyInstance, page: HttpContext): void {
  const { settings } = page.deps;
  const trustPeriod = describeDuration(settings.MFA_TRUST_COOKIE_AGE);
  const showAuthenticate = (request: FastifyRequest, reply: FastifyReply, form: FormState = emptyForm(), status = 200) =>
    renderPage(page, request, reply, 'mfa/authenticate.html', { title: 'Two-factor authentication', form, trust_enabled: settings.MFA_TRUST_ENABLED, trust_period: trustPeriod }, status);

  scope.get(MFA_AUTHENTICATE_PAGE, async (request, reply) => {
    if (!(await loginWaitingAt(page, request, 'mfa_authenticate'))) return redirect(reply, LOGIN_PAGE);
    return showAuthenticate(request, reply);
  });

  scope.post(MFA_AUTHENTICATE_PAGE, async (request, reply) => {
    const pending = await loginWaitingAt(page, request, 'mfa_authenticate');
    if (!pending) return redirect(reply, LOGIN_PAGE);
    const fields = formFields(request.body, ['code', 'trust']);
    let result;
    try {
      // The page asks "trust this browser?" together with the code: both answers go at once.
      const answers = { code: fields.code, trust: fields.trust === 'on' };
      result = await continueLogin(page.deps, pending.login, answers, loginContextOf(page, request));
    } catch (error) {
      return showAuthenticate(request, reply, formWithError({ trust: fields.trust }, error), refusalStatus(reply, error));
    }
    const outcome = await settleLogin(page, request, reply, result, { remember: pending.remember, next: pending.next });
    return presentLogin(page, request, reply, outcome, pending.next);
  });

  const showReauthenticate = (request: FastifyRequest, reply: FastifyReply, next: string, form: FormState = emptyForm(), status = 200) =>
    renderPage(page, request, reply, 'mfa/reauthenticate.html', { title: 'Confirm access', form, next }, status);

  /** The signed-in user with a second factor, or where to send anyone else. */
  async function userWithSecondFactor(request: FastifyRequest, reply: FastifyReply, next: string) {
    const signedIn = await requireUser(page, request, reply);
    if ('response' in signedIn) return signedIn;
    if (await hasMfaEnabled(page.deps, signedIn.user.id)) return signedIn;
    return { response: redirect(reply, `/accounts/reauthenticate/${next ? `?next=${encodeURIComponent(next)}` : ''}`) };
  }

  scope.get('/accounts/2fa/reauthenticate/', async (request, reply) => {
    const next = safeRedirectOr((request.query as Record<string, unknown>).next, '');
    const signedIn = await userWithSecondFactor(request, reply, next);
    if ('response' in signedIn) return signedIn.response;
    return showReauthenticate(request, reply, next);
  });

  scope.post('/accounts/2fa/reauthenticate/', async (request, reply) => {
    const fields = formFields(request.body, ['code', 'next']);
    const next = safeRedirectOr(fields.next, '');
    const signedIn = await userWithSecondFactor(request, reply, next);
    if ('response' in signedIn) return signedIn.response;
    try {
      const type = await reauthenticateWithCode(page.deps, { user: signedIn.user, code: fields.code, client: clientOf(request) });
      await page.sessions.markReauthenticated(request, codeRecord(type, page.deps.clock.now(), true));
    } catch (error) {
      return showReauthenticate(request, reply, next, formWithError({}, error), refusalStatus(reply, error));
    }
    return redirect(reply, next || '/');
  });
}
