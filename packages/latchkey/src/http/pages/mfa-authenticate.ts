import type { AuthenticationResponseJSON } from '@simplewebauthn/server';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { User } from '../../account/model.js';
import { continueLogin } from '../../login/pipeline.js';
import { secondFactorChoices, securityKeyOptionsForLogin } from '../../login/second-factor-choices.js';
import type { StageAnswers } from '../../login/stages.js';
import { hasMfaEnabled } from '../../mfa/authenticators.js';
import { reauthenticateWithCode, reauthenticateWithWebauthn } from '../../mfa/flows/authenticate.js';
import { mfaOverview } from '../../mfa/flows/manage.js';
import { webauthnAuthenticationOptions } from '../../mfa/flows/webauthn.js';
import { msg, nmsg, type Message } from '../../core/i18n/message.js';
import { codeRecord } from '../kit/authentication-records.js';
import type { HttpContext } from '../kit/context.js';
import { loginContextOf } from '../kit/login-context.js';
import { clientOf } from '../kit/request-info.js';
import { redirectTargetOr } from '../kit/safe-redirect.js';
import { loginWaitingAt, settleLogin, type PendingLogin } from '../kit/session-state.js';
import { credentialOfField, takeWebauthnCeremony } from '../kit/webauthn-ceremony.js';
import { presentLogin } from './login-outcome.js';
import { emptyForm, formFields, formWithError, redirect, refusalStatus, renderPage, requireUser, type FormState } from './page.js';
import { sendOptions, sendOptionsElsewhere, sendOptionsRefusal, wantsOptions } from './webauthn-options.js';

/** "14 days", "1 day", "12 hours", "1 minute": the trust period as the checkbox states it (a message, translated there). */
export function describeDuration(seconds: number): Message {
  if (seconds >= 86400) return nmsg('{count} day', '{count} days', Math.round(seconds / 86400));
  if (seconds >= 3600) return nmsg('{count} hour', '{count} hours', Math.round(seconds / 3600));
  return nmsg('{count} minute', '{count} minutes', Math.max(1, Math.round(seconds / 60)));
}

/** A security key's answer as a form posts it: the browser's JSON, with the ceremony this session began. */
async function keyAnswer(ctx: HttpContext, request: FastifyRequest, credentialField: string, purpose: 'authenticate' | 'reauthenticate') {
  const credential = credentialOfField(credentialField) as unknown as AuthenticationResponseJSON;
  return { ceremony: await takeWebauthnCeremony(ctx, request, purpose), credential };
}

/**
 * The login's second step, and reauthentication by code or by security key. The second step
 * serves only a browser whose login stopped at this stage and has not expired
 * (kit/session-state.ts); anyone else is sent to the login page. Until the second factor is
 * proved there is no session of the user at all, so every page that needs one answers as to a
 * stranger, and a stolen password alone reaches nothing. A user with a security key is offered
 * it beside the code (its options fetched by static/webauthn.js, see webauthn-options.ts).
 */
export function registerMfaAuthenticationPages(scope: FastifyInstance, ctx: HttpContext): void {
  const { settings, urls } = ctx.deps;
  const trustPeriod = describeDuration(settings.MFA_TRUST_COOKIE_AGE);
  const showAuthenticate = async (request: FastifyRequest, reply: FastifyReply, pending: PendingLogin, form: FormState = emptyForm(), status = 200) =>
    renderPage(ctx, request, reply, 'mfa/authenticate.html', {
      title: msg('Two-factor authentication'),
      form,
      choices: await secondFactorChoices(ctx.deps, pending.login),
      trust_enabled: settings.MFA_TRUST_ENABLED,
      trust_period: trustPeriod,
    }, status);

  scope.get(urls.route('mfa_authenticate'), async (request, reply) => {
    const pending = await loginWaitingAt(ctx, request, 'mfa_authenticate');
    if (wantsOptions(request)) {
      if (!pending) return sendOptionsElsewhere(reply, urls.urlFor('account_login'));
      try {
        return await sendOptions(ctx, request, reply, 'request_options', await securityKeyOptionsForLogin(ctx.deps, pending.login));
      } catch (error) {
        return sendOptionsRefusal(ctx, request, reply, error);
      }
    }
    if (!pending) return redirect(reply, urls.urlFor('account_login'));
    return showAuthenticate(request, reply, pending);
  });

  scope.post(urls.route('mfa_authenticate'), async (request, reply) => {
    const pending = await loginWaitingAt(ctx, request, 'mfa_authenticate');
    if (!pending) return redirect(reply, urls.urlFor('account_login'));
    const fields = formFields(request.body, ['code', 'trust', 'credential']);
    let result;
    try {
      // The page asks "trust this browser?" together with the code or the key: both answers go at once.
      const trust = fields.trust === 'on';
      const answers: StageAnswers = fields.credential !== '' ? { webauthn: await keyAnswer(ctx, request, fields.credential, 'authenticate'), trust } : { code: fields.code, trust };
      result = await continueLogin(ctx.deps, pending.login, answers, loginContextOf(ctx, request));
    } catch (error) {
      return showAuthenticate(request, reply, pending, formWithError({ trust: fields.trust }, error), refusalStatus(reply, error));
    }
    const outcome = await settleLogin(ctx, request, reply, result, { remember: pending.remember, next: pending.next });
    return presentLogin(ctx, request, reply, outcome, pending.next);
  });

  /** The reauthentication page: a code form where the user has codes, a security key form where they have keys. */
  async function showReauthenticate(request: FastifyRequest, reply: FastifyReply, user: User, next: string, form: FormState = emptyForm(), status = 200) {
    const overview = await mfaOverview(ctx.deps, user);
    return renderPage(ctx, request, reply, 'mfa/reauthenticate.html', {
      title: msg('Confirm access'),
      form,
      next,
      authenticator_app: overview.totp !== undefined,
      recovery_codes: overview.recoveryCodes !== undefined,
      security_key: overview.webauthn.length > 0,
    }, status);
  }

  /** The signed-in user with a second factor, or where to send anyone else. */
  async function userWithSecondFactor(request: FastifyRequest, reply: FastifyReply, next: string) {
    const signedIn = await requireUser(ctx, request, reply);
    if ('response' in signedIn) return signedIn;
    if (await hasMfaEnabled(ctx.deps, signedIn.user.id)) return signedIn;
    return { response: redirect(reply, urls.urlFor('account_reauthenticate', {}, next ? { next } : {})) };
  }

  const nextOfQuery = (request: FastifyRequest) => redirectTargetOr(ctx.deps.adapter, (request.query as Record<string, unknown>).next, '');

  scope.get(urls.route('mfa_reauthenticate'), async (request, reply) => {
    const next = nextOfQuery(request);
    const signedIn = await userWithSecondFactor(request, reply, next);
    if ('response' in signedIn) return signedIn.response;
    return showReauthenticate(request, reply, signedIn.user, next);
  });

  scope.post(urls.route('mfa_reauthenticate'), async (request, reply) => {
    const fields = formFields(request.body, ['code', 'next']);
    const next = redirectTargetOr(ctx.deps.adapter, fields.next, '');
    const signedIn = await userWithSecondFactor(request, reply, next);
    if ('response' in signedIn) return signedIn.response;
    try {
      const type = await reauthenticateWithCode(ctx.deps, { user: signedIn.user, code: fields.code, client: clientOf(request) });
      await ctx.sessions.markReauthenticated(request, codeRecord(type, ctx.deps.clock.now(), true));
    } catch (error) {
      return showReauthenticate(request, reply, signedIn.user, next, formWithError({}, error), refusalStatus(reply, error));
    }
    return redirect(reply, next || '/');
  });

  // allauth's own path for reauthenticating with a key; the page is the same as by code.
  scope.get(urls.route('mfa_reauthenticate_webauthn'), async (request, reply) => {
    const next = nextOfQuery(request);
    if (wantsOptions(request)) {
      const user = await ctx.sessions.currentUser(request);
      if (!user) return sendOptionsElsewhere(reply, urls.urlFor('account_login'));
      try {
        return await sendOptions(ctx, request, reply, 'request_options', await webauthnAuthenticationOptions(ctx.deps, 'reauthenticate', user));
      } catch (error) {
        return sendOptionsRefusal(ctx, request, reply, error);
      }
    }
    const signedIn = await userWithSecondFactor(request, reply, next);
    if ('response' in signedIn) return signedIn.response;
    return showReauthenticate(request, reply, signedIn.user, next);
  });

  scope.post(urls.route('mfa_reauthenticate_webauthn'), async (request, reply) => {
    const fields = formFields(request.body, ['credential', 'next']);
    const next = redirectTargetOr(ctx.deps.adapter, fields.next, '');
    const signedIn = await userWithSecondFactor(request, reply, next);
    if ('response' in signedIn) return signedIn.response;
    try {
      const answer = await keyAnswer(ctx, request, fields.credential, 'reauthenticate');
      await reauthenticateWithWebauthn(ctx.deps, { user: signedIn.user, answer, client: clientOf(request) });
      await ctx.sessions.markReauthenticated(request, codeRecord('webauthn', ctx.deps.clock.now(), true));
    } catch (error) {
      return showReauthenticate(request, reply, signedIn.user, next, formWithError({}, error), refusalStatus(reply, error));
    }
    return redirect(reply, next || '/');
  });
}
