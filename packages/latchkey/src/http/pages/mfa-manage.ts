import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isLatchkeyError } from '../../core/errors.js';
import { msg } from '../../core/i18n/message.js';
import { mfaOverview } from '../../mfa/flows/manage.js';
import { viewRecoveryCodes, regenerateRecoveryCodes } from '../../mfa/flows/recovery-codes.js';
import { activateTotp, deactivateTotp, totpSetup } from '../../mfa/flows/totp.js';
import type { User } from '../../account/model.js';
import { keepPendingTotpSecret, pendingTotpSecret } from '../kit/session-state.js';
import { emptyForm, flash, formFields, formWithError, redirect, refusalStatus, renderPage, redirectUnlessRecentlyAuthenticated, requireUser, type FormState } from './page.js';
import type { HttpContext } from '../kit/context.js';
import { clientOf, logMailFailures } from '../kit/request-info.js';

/**
 * The pages where a signed-in user manages their second factors (allauth.mfa's paths). The flows
 * decide every rule (a verified address, a recent reauthentication, what goes with what); the
 * pages only ask, show, and turn a 'reauthentication_required' into the reauthentication page.
 */
export function registerMfaManagementPages(scope: FastifyInstance, ctx: HttpContext): void {
  const { urls } = ctx.deps;
  /** The signed-in user and when they last proved who they are, or the response that sends them to prove it. */
  async function signedIn(request: FastifyRequest, reply: FastifyReply): Promise<{ user: User; lastAuthenticatedAt: Date | undefined } | { response: FastifyReply }> {
    const result = await requireUser(ctx, request, reply);
    if ('response' in result) return result;
    return { user: result.user, lastAuthenticatedAt: await ctx.sessions.lastAuthenticatedAt(request) };
  }

  /**
   * The response to a refusal every MFA page shares, or undefined when the page shows it itself.
   * Wrapped in `{ response }` for the reason redirectUnlessRecentlyAuthenticated gives: a bare reply
   * returned from an async function is awaited as a thenable, resolves to undefined once sent, and
   * the caller would go on to render (and save session state) after the redirect went out.
   */
  async function commonRefusal(request: FastifyRequest, reply: FastifyReply, error: unknown): Promise<{ response: FastifyReply } | undefined> {
    if (isLatchkeyError(error, 'reauthentication_required')) return redirectUnlessRecentlyAuthenticated(ctx, request, reply);
    if (isLatchkeyError(error, 'not_found') || isLatchkeyError(error, 'authenticator_exists')) {
      await flash(ctx, request, reply, { level: 'info', text: error.text });
      return { response: redirect(reply, urls.urlFor('mfa_index')) };
    }
    return undefined;
  }

  /** Runs a page's work, answering the shared refusals (commonRefusal) and rethrowing anything else. */
  async function answeringRefusals(request: FastifyRequest, reply: FastifyReply, work: () => Promise<FastifyReply>): Promise<FastifyReply> {
    try {
      return await work();
    } catch (error) {
      const refusal = await commonRefusal(request, reply, error);
      if (refusal) return refusal.response;
      throw error;
    }
  }

  const pendingSecret = (request: FastifyRequest) => pendingTotpSecret(ctx, request);
  const keepPendingSecret = (request: FastifyRequest, reply: FastifyReply, pending: string | undefined) => keepPendingTotpSecret(ctx, request, reply, pending);

  scope.get(urls.route('mfa_index'), async (request, reply) => {
    const auth = await requireUser(ctx, request, reply);
    if ('response' in auth) return auth.response;
    const overview = await mfaOverview(ctx.deps, auth.user);
    return renderPage(ctx, request, reply, 'mfa/index.html', {
      title: msg('Two-factor authentication'),
      types: overview.types,
      totp_digits: ctx.deps.settings.MFA_TOTP_DIGITS,
      totp_period: ctx.deps.settings.MFA_TOTP_PERIOD,
      // Dates, which mfa/index.html shows with the `date` filter in the reader's language.
      totp: { active: overview.totp !== undefined, created_at: overview.totp?.createdAt ?? null, last_used_at: overview.totp?.lastUsedAt ?? null },
      recovery_codes: { active: overview.recoveryCodes !== undefined, unused: overview.recoveryCodes?.unused ?? 0, total: overview.recoveryCodes?.total ?? 0 },
      webauthn: { count: overview.webauthn.length, passkeys: overview.webauthn.filter((key) => key.passwordless).length },
    });
  });

  async function showActivation(request: FastifyRequest, reply: FastifyReply, user: User, form: FormState = emptyForm(), status = 200): Promise<FastifyReply> {
    const title = msg('Activate authenticator app');
    try {
      const setup = await totpSetup(ctx.deps, user, await pendingSecret(request));
      await keepPendingSecret(request, reply, setup.pending);
      return await renderPage(ctx, request, reply, 'mfa/totp/activate_form.html', { title, qr_svg: setup.qrSvg, secret: setup.secret, totp_url: setup.totpUrl, form }, status);
    } catch (error) {
      if (isLatchkeyError(error, 'email_unverified')) return renderPage(ctx, request, reply, 'mfa/totp/activate_form.html', { title, unverified: true }, status === 200 ? 200 : 400);
      const refusal = await commonRefusal(request, reply, error);
      if (refusal) return refusal.response;
      throw error;
    }
  }

  scope.get(urls.route('mfa_activate_totp'), async (request, reply) => {
    const auth = await signedIn(request, reply);
    if ('response' in auth) return auth.response;
    const reauthenticate = await redirectUnlessRecentlyAuthenticated(ctx, request, reply);
    if (reauthenticate) return reauthenticate.response;
    return showActivation(request, reply, auth.user);
  });

  scope.post(urls.route('mfa_activate_totp'), async (request, reply) => {
    const auth = await signedIn(request, reply);
    if ('response' in auth) return auth.response;
    const { code } = formFields(request.body, ['code']);
    let result;
    try {
      result = await activateTotp(ctx.deps, { ...auth, client: clientOf(request), pending: await pendingSecret(request), code });
    } catch (error) {
      const refusal = await commonRefusal(request, reply, error);
      if (refusal) return refusal.response;
      return showActivation(request, reply, auth.user, formWithError({}, error), refusalStatus(reply, error));
    }
    await keepPendingSecret(request, reply, undefined);
    // A new factor is a change of privilege: the session id seen before it is worthless after it.
    await ctx.sessions.rotate(request, reply);
    logMailFailures(request, [result.notification], 'TOTP activation notice');
    await flash(ctx, request, reply, { level: 'success', text: msg('Authenticator app activated.') });
    return redirect(reply, urls.urlFor(result.recoveryCodesGenerated ? 'mfa_view_recovery_codes' : 'mfa_index'));
  });

  scope.get(urls.route('mfa_deactivate_totp'), async (request, reply) => {
    const auth = await signedIn(request, reply);
    if ('response' in auth) return auth.response;
    const reauthenticate = await redirectUnlessRecentlyAuthenticated(ctx, request, reply);
    if (reauthenticate) return reauthenticate.response;
    const overview = await mfaOverview(ctx.deps, auth.user);
    if (!overview.totp) return redirect(reply, urls.urlFor('mfa_index'));
    return renderPage(ctx, request, reply, 'mfa/totp/deactivate_form.html', {
      title: msg('Deactivate authenticator app'),
      form: emptyForm(),
      recovery_codes_will_go: overview.recoveryCodes !== undefined,
    });
  });

  scope.post(urls.route('mfa_deactivate_totp'), async (request, reply) => {
    const auth = await signedIn(request, reply);
    if ('response' in auth) return auth.response;
    return answeringRefusals(request, reply, async () => {
      const { notification } = await deactivateTotp(ctx.deps, { ...auth, client: clientOf(request) });
      logMailFailures(request, [notification], 'TOTP deactivation notice');
      await flash(ctx, request, reply, { level: 'success', text: msg('Authenticator app deactivated.') });
      return redirect(reply, urls.urlFor('mfa_index'));
    });
  });

  scope.get(urls.route('mfa_view_recovery_codes'), async (request, reply) => {
    const auth = await signedIn(request, reply);
    if ('response' in auth) return auth.response;
    return answeringRefusals(request, reply, async () => {
      const codes = await viewRecoveryCodes(ctx.deps, auth);
      return renderPage(ctx, request, reply, 'mfa/recovery_codes/index.html', { title: msg('Recovery codes'), unused_codes: codes.unused, total: codes.total });
    });
  });

  scope.get(urls.route('mfa_download_recovery_codes'), async (request, reply) => {
    const auth = await signedIn(request, reply);
    if ('response' in auth) return auth.response;
    return answeringRefusals(request, reply, async () => {
      const codes = await viewRecoveryCodes(ctx.deps, auth);
      return reply
        .header('cache-control', 'no-store')
        .header('content-disposition', 'attachment; filename="recovery-codes.txt"')
        .header('x-content-type-options', 'nosniff')
        .type('text/plain; charset=utf-8')
        .send(`${codes.unused.join('\n')}\n`);
    });
  });

  const showGenerate = async (request: FastifyRequest, reply: FastifyReply, user: User, form: FormState = emptyForm(), status = 200) =>
    renderPage(ctx, request, reply, 'mfa/recovery_codes/generate.html', {
      title: msg('Generate recovery codes'),
      form,
      has_codes: (await mfaOverview(ctx.deps, user)).recoveryCodes !== undefined,
    }, status);

  scope.get(urls.route('mfa_generate_recovery_codes'), async (request, reply) => {
    const auth = await signedIn(request, reply);
    if ('response' in auth) return auth.response;
    const reauthenticate = await redirectUnlessRecentlyAuthenticated(ctx, request, reply);
    if (reauthenticate) return reauthenticate.response;
    return showGenerate(request, reply, auth.user);
  });

  scope.post(urls.route('mfa_generate_recovery_codes'), async (request, reply) => {
    const auth = await signedIn(request, reply);
    if ('response' in auth) return auth.response;
    try {
      const { notification } = await regenerateRecoveryCodes(ctx.deps, { ...auth, client: clientOf(request) });
      logMailFailures(request, [notification], 'recovery codes notice');
    } catch (error) {
      const refusal = await commonRefusal(request, reply, error);
      if (refusal) return refusal.response;
      return showGenerate(request, reply, auth.user, formWithError({}, error), refusalStatus(reply, error));
    }
    await flash(ctx, request, reply, { level: 'success', text: msg('New recovery codes generated; the old ones no longer work.') });
    return redirect(reply, urls.urlFor('mfa_view_recovery_codes'));
  });
}
