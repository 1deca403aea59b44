import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { continueLoginWithCode } from '../../account/flows/login.js';
import { hasMfaEnabled } from '../../mfa/authenticators.js';
import { reauthenticateWithCode, trustThisBrowser } from '../../mfa/flows/authenticate.js';
import { codeRecord } from '../kit/authentication-records.js';
import { setMfaTrustCookie } from '../kit/mfa-trust-cookie.js';
import { safeRedirectOr } from '../kit/safe-redirect.js';
import { finishLogin } from './login.js';
import { emptyForm, formFields, formWithError, redirect, refusalStatus, renderPage, requireUser, type FormState, type PageDeps } from './page.js';
import { clientOf } from '../kit/request-info.js';
import { currentPendingLogin } from '../kit/pending-login.js';

export const MFA_AUTHENTICATE = '/accounts/2fa/authenticate/';

/** "14 days", "1 day", "12 hours", "1 minute": the trust period as the checkbox states it. */
export function describeDuration(seconds: number): string {
  const [count, unit] = seconds >= 86400 ? [Math.round(seconds / 86400), 'day'] : seconds >= 3600 ? [Math.round(seconds / 3600), 'hour'] : [Math.max(1, Math.round(seconds / 60)), 'minute'];
  return `${count} ${unit}${count === 1 ? '' : 's'}`;
}

/**
 * The login's second step, and reauthentication by code. The code page serves only a browser
 * whose login stopped at this stage and has not expired (pending-login.ts); anyone else is sent
 * to the login page. Until the code is right there is no session of the user at all, so every
 * page that needs one answers as to a stranger (security test 31).
 */
export function registerMfaAuthenticationPages(scope: FastifyInstance, page: PageDeps): void {
  const { settings } = page.deps;
  const trustPeriod = describeDuration(settings.MFA_TRUST_COOKIE_AGE);
  const showAuthenticate = (request: FastifyRequest, reply: FastifyReply, form: FormState = emptyForm(), status = 200) =>
    renderPage(page, request, reply, 'mfa/authenticate.html', { title: 'Two-factor authentication', form, trust_enabled: settings.MFA_TRUST_ENABLED, trust_period: trustPeriod }, status);

  scope.get(MFA_AUTHENTICATE, async (request, reply) => {
    const pending = await currentPendingLogin(page, request);
    if (pending?.stage !== 'mfa_authenticate') return redirect(reply, '/accounts/login/');
    return showAuthenticate(request, reply);
  });

  scope.post(MFA_AUTHENTICATE, async (request, reply) => {
    const pending = await currentPendingLogin(page, request);
    if (pending?.stage !== 'mfa_authenticate') return redirect(reply, '/accounts/login/');
    const fields = formFields(request.body, ['code', 'trust']);
    let result;
    try {
      result = await continueLoginWithCode(page.deps, pending.login, fields.code, { client: clientOf(request) });
    } catch (error) {
      return showAuthenticate(request, reply, formWithError({ trust: fields.trust }, error), refusalStatus(reply, error));
    }
    if (!result) return redirect(reply, '/accounts/login/');
    if (result.status === 'authenticated' && fields.trust === 'on') setMfaTrustCookie(reply, settings, await trustThisBrowser(page.deps, result.user));
    return finishLogin(page, request, reply, result, { remember: pending.remember, next: pending.next });
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
